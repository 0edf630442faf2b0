"""PostgreSQL specifics: namespaces, writers in several processes, the dialect translation.
(The stores' own behaviour runs on both engines: tests marked `engines` in tests/memory.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import Embedder
from tideline.errors import ConfigError, StoreError
from tideline.memory import AGENT_MIGRATIONS
from tideline.store import Namespace, open_postgres, to_postgres

WRITER = Path(__file__).with_name("pg_writer.py")


def _app(url: str, agent: str, embedder: Embedder | None = None, user: str = "") -> Tideline:
    overrides = {"database_url": url, "agent_name": agent, "database_user": user}
    if embedder is None:
        overrides["embedder"] = "none"
    return Tideline(Settings.load(overrides=overrides), embedder=embedder)


def test_two_agents_sharing_words_never_see_each_other(pg_url: str, e5: Embedder) -> None:
    alice, bob = _app(pg_url, "ns-alice", e5), _app(pg_url, "ns-bob", e5)
    alice_user = _app(pg_url, "ns-alice", e5, user="u1")
    try:
        alice.memory.sync_turn("s", "user", "The blue whale sings at dawn near the pier")
        alice.memory.write(gesture="Alice heard the blue whale sing", tags=["whale"])
        bob.memory.sync_turn("s", "user", "The blue whale sleeps at noon in the bay")
        bob.memory.write(gesture="Bob saw the blue whale sleep", tags=["whale"])
        alice_user.memory.write(gesture="A user of Alice's saw the blue whale", tags=["whale"])
        for app, who in ((alice, "Alice"), (bob, "Bob"), (alice_user, "A user of Alice's")):
            for mode in ("hybrid", "lex", "vec"):
                hits = app.memory.search("blue whale", k=10, mode=mode, include_turns=False).hits
                assert hits and all(h.text.startswith(who) for h in hits), (who, mode, hits)
        turns = alice.memory.search("whale", k=10, include_turns=True).hits
        assert {h.text for h in turns} == {
            "Alice heard the blue whale sing",
            "The blue whale sings at dawn near the pier",
        }
        assert alice.memory.stats()["turns"] == 1 and alice_user.memory.stats()["turns"] == 0
    finally:
        for app in (alice, bob, alice_user):
            app.close()


def test_writers_in_four_processes_lose_and_duplicate_nothing(pg_url: str) -> None:
    common, own, workers = 30, 20, 4
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), pg_url, "ns-busy", str(w), str(common), str(own)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(workers)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * workers, [err for _, err in outputs]
    assert sum(int(out) for out, _ in outputs) == common + own * workers  # each created once
    app = _app(pg_url, "ns-busy")
    try:
        turns = app.memory.raw.recent(1000, session="shared")
        assert len(turns) == common + own * workers
        assert [t.seq for t in turns] == list(range(1, len(turns) + 1))  # no gap, no twin
        assert len({t.text for t in turns}) == len(turns)
        assert app.memory.stats()["turns"] == len(turns)
    finally:
        app.close()


def test_chinese_and_russian_match_as_on_sqlite(pg_url: str) -> None:
    app = _app(pg_url, "ns-words")
    try:
        app.memory.write(gesture="用户喜欢吃苹果和香蕉")
        app.memory.write(gesture="Пользователь переехал в Лиссабон")
        app.memory.write(gesture="Café crème at the Rua Augusta")
        assert [h.text for h in app.memory.search("苹果", k=3).hits] == ["用户喜欢吃苹果和香蕉"]
        assert [h.text for h in app.memory.search("лиссабон", k=3).hits] == [
            "Пользователь переехал в Лиссабон"
        ]
        assert [h.text for h in app.memory.search("cafe CREME", k=3).hits] == [
            "Café crème at the Rua Augusta"
        ]
        assert [h.text for h in app.memory.search("augus", k=3).hits] == [  # a substring
            "Café crème at the Rua Augusta"
        ]
    finally:
        app.close()


def test_bad_places_are_one_line_errors(pg_url: str) -> None:
    with pytest.raises(ConfigError, match="cannot name a PostgreSQL namespace"):
        Namespace("bad name!")
    with pytest.raises(StoreError, match=r"cannot connect to PostgreSQL .* server is running"):
        open_postgres("postgresql://nobody@127.0.0.1:1/x", Namespace("a"), AGENT_MIGRATIONS)
    with pytest.raises(StoreError, match=r"cannot connect .* fix TIDELINE_DATABASE_URL"):
        open_postgres("postgresql://[::1/x", Namespace("a"), AGENT_MIGRATIONS)


def test_the_dialect_translation() -> None:
    assert to_postgres("SELECT a FROM t WHERE b = ? AND c LIKE 'x%?'") == (
        "SELECT a FROM t WHERE b = %s AND c LIKE 'x%%?'"
    )
    assert to_postgres("CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB, w REAL) WITHOUT ROWID") == (
        "CREATE TABLE t(id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, v BYTEA,"
        " w DOUBLE PRECISION)"
    )


def test_a_released_exclusive_lock_is_free_at_once(pg_url: str) -> None:
    """A sleep's lock is free the moment its block ends: the next sleep, started right after,
    takes it (the server dropped a closed connection's lock a moment later, so a second sleep
    straight after the first was refused now and then — `test_a_second_sleep_says_so_and_exits`)."""
    app = _app(pg_url, "ns-exclusive")
    try:
        db = app.memory.db
        for _ in range(100):
            with db.exclusive("sleep") as held:  # type: ignore[attr-defined]
                assert held is None
                with db.exclusive("sleep") as other:  # type: ignore[attr-defined]
                    assert other is not None and "pid" in other  # held: refused, named
    finally:
        app.close()
