"""One run of a pipeline at a time per database: an exclusive, non-blocking lock on
`<db>.<what>.lock` (`<db>.sleep.lock`, `<db>.dream.lock`), or on PostgreSQL the namespace's
advisory lock of that name.

`flock` locks belong to the open file, so the kernel releases them when the process dies — a
run killed with SIGKILL never leaves a stale lock behind; PostgreSQL drops a session's advisory
locks when its connection ends, for the same reason. A second run finds the lock taken and
stops at once with `SleepBusy` (`DreamBusy`, ...), naming the process that holds it.
"""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import AbstractContextManager
from pathlib import Path
from types import TracebackType
from typing import Protocol, cast

from tideline.errors import SleepBusy
from tideline.store import Storage

_MEMORY_LOCKS: dict[str, threading.Lock] = {}  # for a database without a file (":memory:")


class _Exclusive(Protocol):
    """`PgDatabase.exclusive`: a namespace-wide lock across processes (None: held; else who
    holds it)."""

    def exclusive(self, name: str) -> AbstractContextManager[str | None]: ...


class RunLock:
    def __init__(self, db: Storage, what: str, busy: type[SleepBusy]):
        self.db = db.path
        self.what, self.busy = what, busy
        self._server = cast(_Exclusive, db) if db.dialect == "postgresql" else None
        self._held: AbstractContextManager[str | None] | None = None
        self.path = None if db.path is None or self._server else Path(f"{db.path}.{what}.lock")
        self._memory_lock = _MEMORY_LOCKS.setdefault(what, threading.Lock())
        self._fd: int | None = None

    def _refuse(self, holder: str = "") -> SleepBusy:
        return self.busy(
            f"another {self.what} is running on {self.db}{holder}; only one runs at a time — "
            "wait for it to finish and run again"
        )

    def __enter__(self) -> RunLock:
        if self._server is not None:
            held = self._server.exclusive(self.what)
            holder = held.__enter__()
            if holder is not None:
                held.__exit__(None, None, None)
                raise self._refuse(f" ({holder})")
            self._held = held
            return self
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
            raise self._refuse(f" (pid {holder})") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            held.__exit__(kind, exc, tb)
            return
        if self.path is None:
            self._memory_lock.release()
            return
        assert self._fd is not None
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
