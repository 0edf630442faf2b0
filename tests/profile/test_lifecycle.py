"""Every status change the lifecycle draws is allowed; every other one is refused in one line."""

from __future__ import annotations

import pytest

from tideline.errors import InvalidInput
from tideline.profile import (
    FACT_NEXT,
    STATUSES,
    STRATEGY_NEXT,
    FactDraft,
    IllegalTransition,
    Profile,
    plan_fast_path,
)
from tideline.profile._profile import BACKING_SLICE

from .conftest import add_fact, move

#: The same tests on SQLite and on PostgreSQL (tests/conftest.py).
pytestmark = pytest.mark.engines

# how to reach each status from a new (suspected) fact
PATH = {
    "suspected": (),
    "confirmed": ("confirmed",),
    "established": ("confirmed", "established"),
    "rejected": ("rejected",),
    "closed": ("closed",),
}
ALLOWED = [(a, b) for a, nexts in FACT_NEXT.items() for b in nexts]
REFUSED = [(a, b) for a in STATUSES for b in STATUSES if (a, b) not in ALLOWED]


@pytest.mark.parametrize(("start", "to"), ALLOWED)
def test_allowed_transition_is_recorded(profile: Profile, start: str, to: str) -> None:
    fid = add_fact(profile)
    move(profile, fid, *PATH[start], to)
    fact = profile.fact(fid)
    assert fact.status == to
    assert (fact.valid_to is not None) == (to in ("rejected", "closed"))
    changes = profile.timeline(fid).changes
    assert [c.to_status for c in changes] == ["suspected", *PATH[start], to]


@pytest.mark.parametrize(("start", "to"), REFUSED)
def test_illegal_transition_is_refused_and_changes_nothing(
    profile: Profile, start: str, to: str
) -> None:
    fid = add_fact(profile)
    move(profile, fid, *PATH[start])
    before, version = profile.counts(), profile.version()
    with pytest.raises(IllegalTransition) as err:
        move(profile, fid, to)
    message = str(err.value)
    assert "\n" not in message and f"#{fid}" in message
    assert profile.fact(fid).status == start
    assert (profile.counts(), profile.version()) == (before, version)


def test_unknown_status_is_refused(profile: Profile) -> None:
    fid = add_fact(profile)
    with pytest.raises(IllegalTransition, match="unknown status 'deleted'"):
        move(profile, fid, "deleted")


def test_reject_keeps_row_reason_and_end_time(profile: Profile, clock) -> None:
    fid = add_fact(profile)
    clock.advance(days=3)
    fact = profile.reject(fid, "the user was joking")
    assert fact.status == "rejected"
    assert fact.rejected_why == "the user was joking"
    assert fact.valid_to == "2026-01-04T09:00:00Z"
    with pytest.raises(IllegalTransition, match="final"):
        profile.close(fid)


def test_close_keeps_row_and_end_time(profile: Profile) -> None:
    fid = add_fact(profile)
    fact = profile.close(fid, at="2026-01-01T12:00:00Z", why="moved away")
    assert (fact.status, fact.valid_to) == ("closed", "2026-01-01T12:00:00Z")
    assert [f.id for f in profile.facts(status="closed")] == [fid]
    assert profile.timeline(fid).changes[-1].why == "moved away"


def test_nothing_is_ever_deleted(profile: Profile) -> None:
    ids = [add_fact(profile, f"value {i}") for i in range(3)]
    before = profile.counts()
    profile.reject(ids[0], "wrong")
    profile.close(ids[1])
    after = profile.counts()
    assert after["facts"] == before["facts"] == 3
    assert after["fact_changes"] == before["fact_changes"] + 2
    assert all(after[t] >= before[t] for t in before)
    assert {f.id for f in profile.facts()} == set(ids)
    assert {a.fact.id for a in profile.active()} == {ids[2]}


def test_stated_twice_is_confirmed_by_the_fast_path(profile: Profile, memory) -> None:
    t1 = memory.sync_turn("s1", "user", "I live in Tokyo").id
    t2 = memory.sync_turn("s2", "user", "Tokyo is home for me").id
    fid = add_fact(profile, turn_ids=(t1,))
    inferred = add_fact(profile, "night owl", category="habit", source_type="inferred")
    view = profile.read()
    assert plan_fast_path(view.facts, view.changeset()) == []  # one mention only

    cs = profile.read().changeset()
    cs.support(fid, turn_ids=(t2,))
    cs.support(inferred, turn_ids=(t2,))
    profile.apply(cs)
    view = profile.read()
    cs = view.changeset()
    assert plan_fast_path(view.facts, cs) == [fid]  # inferred facts need the LLM
    profile.apply(cs)
    fact = profile.fact(fid)
    assert (fact.status, fact.mention_count) == ("confirmed", 2)
    assert [e.text for e in fact.evidence] == ["I live in Tokyo", "Tokyo is home for me"]


def test_same_evidence_twice_is_one_mention(profile: Profile, memory) -> None:
    t1 = memory.sync_turn("s1", "user", "I live in Tokyo").id
    fid = add_fact(profile, turn_ids=(t1,))
    cs = profile.read().changeset()
    cs.support(fid, turn_ids=(t1,))
    profile.apply(cs)
    assert profile.fact(fid).mention_count == 1


def test_the_read_counts_what_backs_every_fact_past_one_slice(profile: Profile, memory) -> None:
    """Sleep's read counts backing in slices (`BACKING_SLICE`); every slice must be counted and
    agree with the one-fact read: sessions, the valid-time span, the sessions against."""
    n = BACKING_SLICE + 7
    cs = profile.read().changeset()
    refs = []
    for i in range(n):
        said = [
            memory.sync_turn(
                f"s{i}-{k}", "user", f"fact {i}", timestamp=f"2025-0{k + 1}-0{1 + i % 9}T10:00:00Z"
            )
            for k in range(2)
        ]
        refs.append(
            cs.add_fact(FactDraft("user", f"c{i}", f"v{i}"), turn_ids=(said[0].id, said[1].id))
        )
    ids = profile.apply(cs).ids
    last = ids[refs[-1]]
    cs = profile.read().changeset()
    cs.against(last, turn_ids=(memory.sync_turn("later", "user", "not so").id,))
    profile.apply(cs)

    view = {f.id: f for f in profile.read().facts}
    assert len(view) == n
    for ref in refs:
        got, one = view[ids[ref]], profile.fact(ids[ref])
        assert got.sessions == 2
        seen = (got.sessions, got.session_ids, got.said_from, got.said_to, got.against)
        assert seen == (one.sessions, one.session_ids, one.said_from, one.said_to, one.against)
    assert view[last].against == 1
    assert view[last].said_from.startswith("2025-01-") and view[last].said_to.startswith("2025-02-")


@pytest.mark.parametrize(("start", "to"), [(a, b) for a, n in STRATEGY_NEXT.items() for b in n])
def test_strategy_moves_forward(profile: Profile, start: str, to: str) -> None:
    cs = profile.read().changeset()
    cs.add_strategy("clarify", None, "Do you often work late?")
    profile.apply(cs)
    sid = profile.strategies()[0].id
    for status in {"open": [], "asked": ["asked"], "resolved": ["resolved"]}[start] + [to]:
        move_strategy(profile, sid, status)
    assert profile.strategies(status=to)[0].id == sid


def move_strategy(profile: Profile, sid: int, to: str) -> None:
    """The two ways a strategy moves: offered to the agent (asked), or settled (resolved)."""
    if to == "asked":
        assert profile.mark_asked([sid]) == [sid]
        return
    cs = profile.read().changeset()
    cs.resolve_strategy(sid, "answered", "said so")
    profile.apply(cs)


def test_strategy_cannot_go_back(profile: Profile) -> None:
    cs = profile.read().changeset()
    cs.add_strategy("probe", None, "Still at the same job?")
    profile.apply(cs)
    sid = profile.strategies()[0].id
    move_strategy(profile, sid, "resolved")
    assert profile.mark_asked([sid]) == []  # a settled question is never offered again
    cs = profile.read().changeset()
    cs.resolve_strategy(sid, "obsolete", "asked again")
    with pytest.raises(IllegalTransition, match="resolved → resolved"):
        profile.apply(cs)
    assert profile.strategies(status="resolved")[0].outcome == "answered"


def test_drafts_are_checked_before_any_write() -> None:
    with pytest.raises(InvalidInput, match="confidence"):
        FactDraft("user", "city", "Tokyo", confidence=1.5)
    with pytest.raises(InvalidInput, match="source_type"):
        FactDraft("user", "city", "Tokyo", source_type="guessed")
    with pytest.raises(InvalidInput, match="valid_from"):
        FactDraft("user", "city", "Tokyo", valid_from="yesterday")
    with pytest.raises(InvalidInput, match="value is empty"):
        FactDraft("user", "city", "  ")


def test_final_facts_take_no_evidence_and_no_edges(profile: Profile, memory) -> None:
    turn = memory.sync_turn("s1", "user", "hello").id
    closed, live = add_fact(profile, "old"), add_fact(profile, "new")
    profile.close(closed)
    for change, action in (
        (lambda cs: cs.support(closed, turn_ids=(turn,)), "gain evidence"),
        (lambda cs: cs.add_edge("causes", live, closed), "join the knowledge graph"),
    ):
        cs = profile.read().changeset()
        change(cs)
        with pytest.raises(IllegalTransition, match=action):
            profile.apply(cs)
