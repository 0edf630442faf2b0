"""Idempotency keys: a write sent again with the same key is answered again, not done again.

A client whose answer was lost after the commit (a timeout, a dropped connection, a server killed
between commit and reply) cannot tell whether its write happened. It sends the write again with
the key it chose for it, as payment APIs do; the second answer is the first one, marked
`replayed`, and nothing is written twice. The same key with a different request is refused: a
key names one write.

`WriteKeys` owns the table `write_keys` (scope, key) → the request's digest, the first answer as
JSON and the record time. The scope is the tool ("memory_write", "sync_turn", "memo_write"), so
one key string may serve one write of each. The caller looks the key up, writes and records the
answer *in one transaction*, after `Storage.lock` on the key, so two racing sends of one key
still make one write. Keys are kept `KEEP_DAYS` days (record time), long past any retry.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from tideline.clock import Clock, to_text
from tideline.errors import InvalidInput
from tideline.store._storage import Storage

MAX_KEY = 200
KEEP_DAYS = 7


def check_key(key: object) -> str | None:
    """The key as given (None: no key), or the one-line error for a key that cannot be one."""
    if key is None or key == "":
        return None
    if not isinstance(key, str) or len(key) > MAX_KEY or not key.isprintable():
        shown = repr(key)[:60]
        raise InvalidInput(
            f"idempotency_key={shown} is not a key: use printable text of at most {MAX_KEY} "
            "characters, the same for every retry of one write (a UUID, say)"
        )
    return key


def digest(request: Mapping[str, Any]) -> str:
    """What a request asked for, as a hash: the same fields and values give the same digest."""
    text = json.dumps(request, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class WriteKeys:
    """The keys already used in one database (see the module docstring)."""

    def __init__(self, db: Storage, clock: Clock):
        self.db = db
        self.clock = clock

    @staticmethod
    def create_table(db: Storage) -> None:
        db.execute(
            "CREATE TABLE IF NOT EXISTS write_keys(scope TEXT NOT NULL, key TEXT NOT NULL,"
            " digest TEXT NOT NULL, answer TEXT NOT NULL, created_at TEXT NOT NULL,"
            " PRIMARY KEY (scope, key))"
        )
        db.execute("CREATE INDEX IF NOT EXISTS write_keys_created ON write_keys(created_at)")

    def replay(self, scope: str, key: str, request: Mapping[str, Any]) -> dict[str, Any] | None:
        """The first answer to this key, or None when it is new (call inside the write's
        transaction: the key is locked until it ends)."""
        self.db.lock(f"write-key\0{scope}\0{key}")
        row = self.db.one(
            "SELECT digest, answer FROM write_keys WHERE scope = ? AND key = ?", (scope, key)
        )
        if row is None:
            return None
        if row["digest"] != digest(request):
            raise InvalidInput(
                f"idempotency_key {key!r} was used for another {scope} request; a key names "
                "one write: send a new key for a new write"
            )
        answer: dict[str, Any] = json.loads(row["answer"])
        return answer

    def record(
        self, scope: str, key: str, request: Mapping[str, Any], answer: Mapping[str, Any]
    ) -> None:
        """Keep the answer under the key (in the write's transaction), and let old keys go."""
        now = self.clock()
        self.db.execute(
            "INSERT INTO write_keys(scope, key, digest, answer, created_at) VALUES (?, ?, ?, ?, ?)",
            (scope, key, digest(request), json.dumps(answer), to_text(now)),
        )
        self.db.execute(
            "DELETE FROM write_keys WHERE created_at < ?",
            (to_text(now - dt.timedelta(days=KEEP_DAYS)),),
        )
