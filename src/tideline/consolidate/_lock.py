"""One sleep (or dream) at a time per database: an exclusive, non-blocking lock on
`<db>.sleep.lock` (`<db>.dream.lock`).

`flock` locks belong to the open file, so the kernel releases them when the process dies — a
run killed with SIGKILL never leaves a stale lock behind. A second run finds the lock taken and
stops at once with `SleepBusy`, naming the process that holds it.
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from types import TracebackType

from tideline.errors import TidelineError

_MEMORY_LOCKS: dict[str, threading.Lock] = {}  # for a database without a file (":memory:")


class SleepBusy(TidelineError):
    """Another sleep is running on the same database."""

    transient = True


class SleepLock:
    def __init__(
        self, db_path: Path | None, what: str = "sleep", busy: type[SleepBusy] = SleepBusy
    ):
        self.db = db_path
        self.what, self.busy = what, busy
        self.path = None if db_path is None else Path(f"{db_path}.{what}.lock")
        self._memory_lock = _MEMORY_LOCKS.setdefault(what, threading.Lock())
        self._fd: int | None = None

    def __enter__(self) -> SleepLock:
        if self.path is None:
            if not self._memory_lock.acquire(blocking=False):
                raise self.busy(
                    f"another {self.what} is running on this database; wait for it to finish"
                )
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise self.busy(
                f"another {self.what} is running on {self.db} (pid {holder}); only "
                "one runs at a time — wait for it to finish and run again"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.path is None:
            self._memory_lock.release()
            return
        assert self._fd is not None
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
