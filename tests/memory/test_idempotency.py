"""Writes that are safe to retry: the same idempotency key again returns the first answer and
stores nothing twice, on SQLite and PostgreSQL (#21: a 500 after the commit made a client's
retry a duplicate)."""

from __future__ import annotations

import threading

import pytest

from tideline.app import Tideline
from tideline.config import Settings
from tideline.errors import InvalidInput
from tideline.memory import Memory

pytestmark = pytest.mark.engines


def test_a_write_sent_again_with_its_key_is_stored_once(memory: Memory) -> None:
    first = memory.write(gesture="Ana moved to Porto", tags=["family"], idempotency_key="w-1")
    again = memory.write(gesture="Ana moved to Porto", tags=["family"], idempotency_key="w-1")
    assert (again.id, again.replayed, first.replayed) == (first.id, True, False)
    assert again.gesture == first.gesture and memory.stats()["narratives"] == 1
    other = memory.write(gesture="Ana moved to Porto", tags=["family"], idempotency_key="w-2")
    assert other.id != first.id and memory.stats()["narratives"] == 2  # a new key: a new write


def test_a_key_names_one_write(memory: Memory) -> None:
    memory.write(gesture="Ana moved to Porto", idempotency_key="k")
    with pytest.raises(InvalidInput, match="was used for another memory_write request"):
        memory.write(gesture="Ben moved to Braga", idempotency_key="k")
    turn = memory.sync_turn("s", "user", "hello", idempotency_key="k")  # another tool's scope
    assert turn.created and not turn.replayed
    with pytest.raises(InvalidInput, match="was used for another sync_turn request"):
        memory.sync_turn("s", "user", "goodbye", idempotency_key="k")
    assert memory.stats()["narratives"] == 1 and memory.stats()["turns"] == 1


@pytest.mark.parametrize("key", ["", None])
def test_no_key_writes_as_before(memory: Memory, key: str | None) -> None:
    memory.write(gesture="twice", idempotency_key=key)
    memory.write(gesture="twice", idempotency_key=key)
    assert memory.stats()["narratives"] == 2


@pytest.mark.parametrize("key", ["x" * 201, "tab\there", 7])
def test_a_key_that_cannot_be_one_is_refused_before_anything_is_written(
    memory: Memory, key: object
) -> None:
    with pytest.raises(InvalidInput, match="is not a key"):
        memory.write(gesture="never stored", idempotency_key=key)
    assert memory.stats()["narratives"] == 0


def test_a_turn_sent_again_with_its_key_gets_the_first_answer(memory: Memory) -> None:
    first = memory.sync_turn("chat", "user", "ok", idempotency_key="t-1")
    again = memory.sync_turn("chat", "user", "ok", idempotency_key="t-1")
    assert (again.id, again.session_id, again.created, again.replayed) == (
        first.id,
        first.session_id,
        False,
        True,
    )
    assert memory.stats()["turns"] == 1


def test_racing_sends_of_one_key_write_once(settings: Settings, memory: Memory) -> None:
    """Four servers over one database (four connections, no shared lock of ours) and two
    threads each send the same keyed write at once, as a client retrying while its first send
    is still in flight: one narrative, every answer naming it."""
    apps = [Tideline(settings, embedder=None) for _ in range(4)]
    answers: list[int] = []
    errors: list[Exception] = []
    start = threading.Barrier(8)

    def send(app: Tideline) -> None:
        try:
            start.wait()
            answers.append(app.memory.write(gesture="one write", idempotency_key="race").id)
        except Exception as exc:  # any error is the failure this test looks for
            errors.append(exc)

    threads = [threading.Thread(target=send, args=(a,)) for a in apps for _ in range(2)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for a in apps:
            a.close()
    assert errors == [] and len(set(answers)) == 1 and len(answers) == 8
    assert memory.stats()["narratives"] == 1
