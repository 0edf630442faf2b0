"""One sleep at a time per database: an exclusive, non-blocking lock on `<db>.sleep.lock`.

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

_MEMORY_LOCK = threading.Lock()  # for a database without a file (":memory:")


class SleepBusy(TidelineError):
    """Another sleep is running on the same database."""

    transient = True


class SleepLock:
    def __init__(self, db_path: Path | None):
        self.db = db_path
        self.path = None if db_path is None else Path(f"{db_path}.sleep.lock")
        self._fd: int | None = None

    def __enter__(self) -> SleepLock:
        if self.path is None:
            if not _MEMORY_LOCK.acquire(blocking=False):
                raise SleepBusy("another sleep is running on this database; wait for it to finish")
            return self
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise SleepBusy(
                f"another sleep is running on {self.db} (pid {holder}); only "
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
            _MEMORY_LOCK.release()
            return
        assert self._fd is not None
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
