"""One run of a pipeline at a time per database: the database's exclusive, non-blocking lock of
the pipeline's name (`Storage.exclusive`) — on SQLite an `flock` on `<db>.<what>.lock`
(`<db>.sleep.lock`, `<db>.dream.lock`), on PostgreSQL the namespace's advisory lock of that name.

`flock` locks belong to the open file, so the kernel releases them when the process dies — a
run killed with SIGKILL never leaves a stale lock behind; PostgreSQL drops a session's advisory
locks when its connection ends, for the same reason. A second run finds the lock taken and
stops at once with `SleepBusy` (`DreamBusy`, ...), naming the process that holds it.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from types import TracebackType

from tideline.errors import SleepBusy
from tideline.store import Storage


class RunLock:
    def __init__(self, db: Storage, what: str, busy: type[SleepBusy]):
        self.db = db.path
        self.what, self.busy = what, busy
        self._storage = db
        self._held: AbstractContextManager[str | None] | None = None

    def _refuse(self, holder: str) -> SleepBusy:
        if self.db is None:  # a database in memory: another thread of this process holds it
            return self.busy(
                f"another {self.what} is running on this database; wait for it to finish"
            )
        return self.busy(
            f"another {self.what} is running on {self.db} ({holder}); only one runs at a time — "
            "wait for it to finish and run again"
        )

    def __enter__(self) -> RunLock:
        held = self._storage.exclusive(self.what)
        holder = held.__enter__()
        if holder is not None:
            held.__exit__(None, None, None)
            raise self._refuse(holder)
        self._held = held
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        held, self._held = self._held, None
        if held is not None:
            held.__exit__(kind, exc, tb)
