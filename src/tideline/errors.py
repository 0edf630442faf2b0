"""Every error Tideline raises on purpose, in one tree.

    TidelineError                 base: a one-line message that names the thing, the rule and the fix
    ├── ConfigError               a setting or config file is invalid
    ├── StoreError                a database cannot be used
    │   ├── DatabaseDamaged       the file is corrupt: restore a backup or `tideline doctor --repair`
    │   │   └── NotADatabase      the file exists but is not (or no longer) a Tideline SQLite file
    │   ├── RepairFailed          `doctor --repair` could not build a usable copy (the original is kept)
    │   ├── DatabaseReplaced      the open file was replaced or moved (a repair, a restore): restart
    │   ├── SchemaTooNew          written by a newer Tideline
    │   ├── DatabaseLocked        another process held the lock past the timeout (transient)
    │   ├── HomeNotWritable       the home folder cannot be created or written
    │   └── IndexDirRefused       a library `.memo` folder memo cannot safely write into or delete from
    ├── EmbedderError             embedding failed
    │   ├── EmbedderUnavailable   backend down or not configured (transient: search falls back to lexical)
    │   └── UnknownEmbedder       no backend of that name is registered
    ├── LLMError                  an LLM call failed or its answer never fit the schema
    │   ├── LLMUnavailable        endpoint down, timed out, or still 429/5xx after the retries (transient)
    │   ├── BudgetExceeded        the next call would take a run past its token budget
    │   └── InputTooLong          a prompt is larger than the input cap; the caller must send less
    ├── ProfileChanged            the profile moved on while a changeset was computed: recompute (transient)
    ├── SleepBusy                 another sleep holds the database's lock: wait for it (transient)
    │   └── DreamBusy             ... another dream
    ├── SleepTimeout              a sleep ran past its timeout, nothing applied (transient)
    └── InvalidInput              a caller sent something that breaks a rule (permanent)
        ├── NotFound              an id or path that does not exist
        │   └── NoCollection      a library path inside no collection
        ├── IllegalTransition     a status change the fact or strategy lifecycle does not allow
        ├── RunBusy               a run of that kind is already going on in this server
        ├── PathOutsideLibrary    a path escapes the library root
        ├── BadMeta               a collection's `_meta.yaml` cannot be used
        └── UnreadableFile        a note that is not a regular file, too large or unreadable
            ├── LinkOutside       ... a link leading out of the library root
            ├── FileChanged       ... changed between a writer's read and its replacement
            └── NoteBusy          ... kept changing while it was being written (transient)

    Signal                        control flow inside one component, never shown (not a TidelineError)
    ├── FormatRefused             a chat backend moved down its structured-output ladder: ask again
    ├── StepFailed                a Sleep step raised: the run stops, applies nothing, records the text
    ├── LayerFailed               a DREAM layer cannot finish: the run stops there
    └── MemoryClosed              the memory closed under a waiting background build: it stops

`transient` tells a scheduler whether retrying later can help.
"""

from __future__ import annotations


class TidelineError(Exception):
    """Base class; `str(err)` is a complete one-line message for a person."""

    transient = False


class ConfigError(TidelineError):
    """A setting or the config file is invalid."""


class StoreError(TidelineError):
    """A database cannot be opened or used."""


class DatabaseDamaged(StoreError):
    """SQLite found the file corrupt (bad page, bad header, bad write-ahead log)."""

    path = ""  # the damaged file, when known: a disposable one (a library index) is rebuilt


class NotADatabase(DatabaseDamaged):
    """The file exists but is empty, not SQLite, or SQLite written by something else."""


class DatabaseReplaced(StoreError):
    """The file a long-running process has open was replaced or moved away under it."""


class RepairFailed(StoreError):
    """`tideline doctor --repair` could not recover a usable database; the damaged file is kept."""


class SchemaTooNew(StoreError):
    """The database was written by a newer version of Tideline."""


class DatabaseLocked(StoreError):
    """Another process held the database lock longer than the busy timeout."""

    transient = True


class HomeNotWritable(StoreError):
    """The home folder cannot be created or written."""


class EmbedderError(TidelineError):
    """Text could not be embedded."""


class EmbedderUnavailable(EmbedderError):
    """The embedding backend is down, unreachable or disabled."""

    transient = True


class UnknownEmbedder(EmbedderError, ConfigError):
    """No embedding backend of the requested name is registered."""


class LLMError(TidelineError):
    """An LLM call failed, was refused, or answered twice with output that breaks the schema."""


class LLMUnavailable(LLMError):
    """The LLM endpoint is down, timed out, or kept answering 429/5xx past the retry cap."""

    transient = True


class BudgetExceeded(LLMError):
    """A run's token budget would be exceeded by the next call; raised before the call is made."""


class InputTooLong(LLMError):
    """A prompt exceeds the input cap; the caller decides what to leave out, not the client."""


class InvalidInput(TidelineError):
    """A caller sent a value that breaks a documented rule."""


class NotFound(InvalidInput):
    """An id or a path that does not exist."""


# -- the profile's and the runs' (`tideline.profile`, `tideline.consolidate`, the web driver) --


class IllegalTransition(InvalidInput):
    """A status change the fact lifecycle does not allow (e.g. reopening a closed fact)."""


class ProfileChanged(TidelineError):
    """The profile was written after a changeset was computed; recompute it from a fresh read."""

    transient = True


class SleepBusy(TidelineError):
    """Another sleep is running on the same database."""

    transient = True


class DreamBusy(SleepBusy):
    """Another dream is running on the same database."""


class SleepTimeout(TidelineError):
    """A run went past its timeout; like any failed step it applied nothing."""

    transient = True


class RunBusy(InvalidInput):
    """A run of this kind is already going on in this server."""


# -- the library's (`tideline.library`) ----------------------------------------------------


class PathOutsideLibrary(InvalidInput):
    """A path points outside the library root."""


class BadMeta(InvalidInput):
    """A collection's `_meta.yaml` cannot be used."""


class NoCollection(NotFound):
    """A path is not inside any collection."""


class UnreadableFile(InvalidInput):
    """A file of the library that is not read: not a regular file, too large or unreadable."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class LinkOutside(UnreadableFile, PathOutsideLibrary):
    """A file is, or was swapped for, a link that leads out of the library root."""

    REASON = "links outside the library; not indexed"

    def __init__(self, path: str):
        super().__init__(path, self.REASON)


class FileChanged(UnreadableFile):
    """The file changed (or appeared) between the writer's read and its replacement."""

    def __init__(self, path: str):
        super().__init__(path, "changed while it was being written; read it again and retry")


class NoteBusy(UnreadableFile):
    """A note kept changing while it was being written (transient: retry later)."""

    transient = True


class IndexDirRefused(StoreError):
    """A `.memo` folder memo cannot safely write into or delete from."""


# -- signals: raised and caught inside one component, never shown to a person ----------------


class Signal(Exception):
    """Base of the exceptions that steer control flow inside one component (a backend tells its
    client to ask again); not a `TidelineError`, so no error handler ever reports one."""


class FormatRefused(Signal):
    """Raised by a backend that just learnt its server lacks a structured-output mode and moved
    down to the next one: the client asks again, re-checking the input cap for the new prompt."""


class StepFailed(Signal):
    """A Sleep step (or its boundary) raised; the run stops there and applies nothing. Its text
    ("step 3 behaviour failed, nothing applied: …") becomes the run's error line."""


class LayerFailed(Signal):
    """A DREAM layer that cannot finish (its Sleep failed); the run stops there, and the layer's
    record carries the text."""


class MemoryClosed(Signal):
    """The memory was closed while a background build waited for the shared connection: the
    build stops quietly."""
