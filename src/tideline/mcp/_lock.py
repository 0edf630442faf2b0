"""One lock per agent database for every tool that touches it.

The SDK runs synchronous tools in worker threads; the memory, script-layer and injection tools
share one apsw connection, so they take turns through the app's `db_lock`. The memory tools leave
the locking to `Memory`, which holds it only for database work: embedding a long text or a query
runs outside it, so a slow call never makes another client's `memory_stats` wait.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tideline.app import Tideline


def shared_lock(app: Tideline) -> AbstractContextManager[object]:
    return app.db_lock
