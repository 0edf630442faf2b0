"""One connection, many threads: every profile call takes the app's lock.

apsw refuses a connection used by two threads at the same moment ("Connection is busy in
another thread"). `test_writers` met it now and then under load: a sleep's thread read and wrote
its run records (`start_run`, `finish_run`, `runs`) and parts of the profile without the lock
while another thread wrote through `Memory`. Here each round starts a reader of every profile
call a sleep, a prefetch or a driver makes and a writer of turns and memories at one barrier,
so they overlap on the connection many times; no call may meet the other inside it. SQLite
only: the rule is apsw's (a PostgreSQL engine holds a connection per thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tests.consolidate.conftest import Agent

ROUNDS = 12


def profile_calls(agent: Agent) -> list[Callable[[], Any]]:
    p = agent.profile
    run = p.start_run()
    return [
        p.version, p.read, p.active, p.observations, p.relationships, p.events, p.calendar,
        p.edges, p.strategies, p.questions, p.user_model, p.trajectory, p.snapshot, p.counts,
        p.digests, p.themes, p.runs, p.facts, p.dump,
        lambda: p.time_window("what did I do last May"),
        lambda: p.finish_run(p.start_run(), "skipped"),
        lambda: p.record_run_tokens(run, 1, 1),
    ]  # fmt: skip


def test_profile_and_memory_share_the_connection_by_the_lock(agent: Agent) -> None:
    agent.say("s1", ("user", "I live in Lisbon."), ("assistant", "Lovely."))
    calls = profile_calls(agent)
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def reader() -> None:
        for _ in range(ROUNDS):
            start.wait(timeout=30)
            for call in calls:
                call()

    def writer() -> None:
        for i in range(ROUNDS):
            start.wait(timeout=30)
            for j in range(len(calls)):
                agent.memory.sync_turn("s1", "user", f"still here {i}.{j}")
                agent.memory.write(gesture=f"noted {i}.{j}", importance=2)

    def guarded(work: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            except BaseException as exc:  # reported below, with the other thread released
                failures.append(exc)
                start.abort()

        return run

    threads = [threading.Thread(target=guarded(w)) for w in (reader, writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    errors = [e for e in failures if not isinstance(e, threading.BrokenBarrierError)]
    assert not errors, [f"{type(e).__name__}: {e}" for e in errors]
    assert not any(t.is_alive() for t in threads)
    assert agent.memory.stats()["narratives"] == ROUNDS * len(calls)
