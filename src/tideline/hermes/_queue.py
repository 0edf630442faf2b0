"""The provider's own worker: turns are kept in order, retried, and never lost.

`sync_turn` only appends to this queue and returns, so the agent never waits on an embedding or
a locked database. One thread runs the jobs in order — keeping a turn, warming the next turn's
prefetch, starting the sleep — so a warm-up or a sleep always sees the turns before it. A turn
that fails for a passing reason (a locked database, a full disk, a dead embedding server) is
retried with a growing pause and stays at the head, so later turns never overtake it; its
timestamp was fixed when it was queued, which makes every retry the same turn to
`Memory.sync_turn` (stored once). A turn the core refuses for good (`InvalidInput`) is logged
and dropped. `drain` waits for the queue up to a deadline; what is still queued then is written
to `<home>/hermes-pending.jsonl`, which the next start queues again first.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from tideline.errors import InvalidInput

log = logging.getLogger("tideline.hermes")

PENDING_FILE = "hermes-pending.jsonl"
FIRST_PAUSE = 0.05  # seconds before the first retry; doubled up to MAX_PAUSE
MAX_PAUSE = 5.0


@dataclass(frozen=True)
class Turn:
    """One side of an exchange, with the time it was said."""

    session: str
    role: str
    text: str
    timestamp: str
    speaker: str | None = None


Job = Turn | Callable[[], object]
_STOP = object()


class Worker:
    """One daemon thread running `keep` for each `Turn` and each other job as it is."""

    def __init__(self, keep: Callable[[Turn], object], pending: Path) -> None:
        self.keep = keep
        self.pending = pending
        self.jobs: queue.Queue[object] = queue.Queue()
        self.stopping = threading.Event()
        self.failures = 0  # retries so far, for the log
        for turn in self._spooled():
            self.jobs.put(turn)
        self.thread = threading.Thread(target=self._run, name="tideline-hermes", daemon=True)
        self.thread.start()

    def put(self, job: Job) -> None:
        self.jobs.put(job)

    def drain(self, timeout: float) -> bool:
        """Stop after the queued jobs, waiting up to `timeout` seconds; True when all ran.
        Turns still queued are spooled to the pending file for the next start."""
        self.jobs.put(_STOP)
        self.thread.join(timeout)
        if not self.thread.is_alive():
            return True
        self.stopping.set()  # a retrying turn stops pausing and gives up
        self.thread.join(1.0)
        self._spool()
        return False

    def _run(self) -> None:
        while True:
            job = self.jobs.get()
            if job is _STOP:
                return
            if isinstance(job, Turn):
                if not self._keep(job):
                    self._requeue_first(job)
                    return
            elif callable(job):
                try:
                    job()
                except Exception:  # a warm-up or a sleep that fails costs nothing kept
                    log.exception("a background job of the Hermes provider failed")

    def _keep(self, turn: Turn) -> bool:
        """Keep `turn`, retrying passing failures; False only when told to stop meanwhile."""
        pause = FIRST_PAUSE
        while True:
            try:
                self.keep(turn)
                return True
            except InvalidInput as exc:
                log.warning(
                    "turn of session %s not kept, the core refused it: %s", turn.session, exc
                )
                return True
            except Exception as exc:
                self.failures += 1
                log.warning(
                    "turn of session %s not kept yet (%s); retrying in %.2f s",
                    turn.session,
                    exc,
                    pause,
                )
            if self.stopping.wait(pause):
                return False
            pause = min(pause * 2, MAX_PAUSE)

    def _requeue_first(self, turn: Turn) -> None:
        rest: list[object] = [turn]
        while True:
            try:
                rest.append(self.jobs.get_nowait())
            except queue.Empty:
                break
        for job in rest:
            self.jobs.put(job)

    def _spool(self) -> None:
        turns = []
        while True:
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                break
            if isinstance(job, Turn):
                turns.append(job)
        if not turns:
            return
        try:
            self.pending.parent.mkdir(parents=True, exist_ok=True)
            with self.pending.open("a", encoding="utf-8") as out:
                out.writelines(json.dumps(asdict(t), ensure_ascii=False) + "\n" for t in turns)
            log.warning("%d turn(s) not kept yet; queued again at the next start", len(turns))
        except OSError as exc:
            log.error("%d turn(s) lost: cannot write %s (%s)", len(turns), self.pending, exc)

    def _spooled(self) -> list[Turn]:
        """The turns a previous run could not keep (the file is removed once read)."""
        if not self.pending.is_file():
            return []
        try:
            lines = self.pending.read_text(encoding="utf-8").splitlines()
            self.pending.unlink()
        except OSError as exc:
            log.warning("cannot read the pending turns in %s: %s", self.pending, exc)
            return []
        turns = []
        for line in lines:
            try:
                turns.append(Turn(**json.loads(line)))
            except (ValueError, TypeError):
                log.warning("a pending turn in %s is unreadable and was dropped", self.pending)
        return turns
