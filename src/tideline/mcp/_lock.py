"""One lock per server for every tool that touches the agent database.

The SDK runs synchronous tools in worker threads; the memory, script-layer and injection tools
share one apsw connection, so they take turns through the same lock.
"""

from __future__ import annotations

import threading
from typing import Any


def shared_lock(server: Any) -> threading.Lock:
    lock: threading.Lock | None = getattr(server, "_tideline_db_lock", None)
    if lock is None:
        lock = threading.Lock()
        server._tideline_db_lock = lock
    return lock
