"""Sleep in the user's own time: what a conversation teaches is valid when its turns were said.

An imported conversation from 2023 slept on in 2026 keeps 2023 in every fact, evidence row,
observation, event, person, strategy and digest (valid time), with 2026 as when Tideline learnt it
(record time); a year replayed night by night through a `ManualClock` runs in seconds; a closed
fact ends exactly when its successor began; an expired event is never active.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from tests.consolidate.conftest import Agent
from tests.llm_server import LLMServer
from tideline.clock import ManualClock, to_text
from tideline.config import Settings
from tideline.consolidate import StepEvent

pytestmark = pytest.mark.engines

MAY = "2023-05-08T13:56:00Z"
LATER = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)  # when the history is slept on


def said(agent: Agent, session: str, text: str, at: str, speaker: str = "Caroline") -> int:
    return agent.memory.sync_turn(session, "user", text, speaker=speaker, timestamp=at).id


def extraction(turn: int, text: str, type_: str = "statement", **more: object) -> dict[str, object]:
    obs = {"type": type_, "topic": "family", "text": text, "turns": [turn]}
    return {"summary": text, "tags": ["family"], "observations": [obs], **more}


@pytest.fixture
def later(tmp_path: Path, server: LLMServer, engine_env: str) -> Agent:
    a = Agent(tmp_path / "later", server.url, ManualClock(LATER))
    yield a
    a.close()


def test_an_imported_conversation_lives_in_its_own_time(later: Agent, server: LLMServer) -> None:
    """Slept on years later: valid times are the turns' own, record times are the sleep's."""
    t1 = said(later, "s1", "I'm researching adoption agencies, Melanie helped me.", MAY)
    t2 = said(later, "s1", "Yesterday I went to an LGBTQ support group.", "2023-05-08T14:02:00Z")
    event = {"title": "went to an LGBTQ support group", "decay_days": 30, "turns": [t2]}
    friend = {"name": "Melanie", "relation": "friend"}
    server.script(
        extraction(t1, "Caroline researches adoption", events=[event], relationships=[friend]),
        step="extract",
    )
    decision = {"observation": 1, "action": "new", "category": "family", "decay_days": 90}
    server.script({"decisions": [{**decision, "value": "researching adoption"}]}, step="classify")
    report = later.sleep().run()
    assert report.status == "done", report.lines()

    [fact] = later.profile.facts()
    assert (fact.valid_from, fact.last_seen_at) == (MAY, MAY)  # said then, not imported now
    assert fact.created_at == to_text(LATER)  # learnt now
    assert [(e.turn_id, e.said_at) for e in fact.evidence] == [(t1, MAY)]
    # 90 days after May 2023 is long past: closed at its own expiry, in 2023, and asked about
    assert (fact.status, fact.expires_at) == ("closed", "2023-08-06T13:56:00Z")
    assert (fact.valid_to, fact.retired_at) == ("2023-08-06T13:56:00Z", to_text(LATER))
    [verify] = [x for x in later.profile.strategies(status=None) if x.kind == "verify"]
    assert (verify.kind, verify.valid_from, verify.created_at) == (
        "verify",
        "2023-08-06T13:56:00Z",
        to_text(LATER),
    )
    # nobody could answer it in 90 days of 2023: it lapsed then, though raised by this run
    assert (verify.outcome, verify.valid_to) == ("expired", "2023-11-04T13:56:00Z")
    assert later.profile.questions() == []  # nothing from 2023 left to ask in 2026
    [obs] = later.profile.observations()
    assert (obs.said_at, obs.created_at) == (MAY, to_text(LATER))
    [melanie] = later.profile.relationships()
    assert (melanie.first_seen_at, melanie.created_at) == (MAY, to_text(LATER))
    [digest] = later.profile.digests()
    assert (digest.valid_from, digest.valid_to) == (MAY, "2023-05-08T14:02:00Z")


def test_an_expired_event_is_never_listed_as_active(later: Agent, server: LLMServer) -> None:
    t = said(later, "s1", "We went camping with the kids last weekend.", "2023-06-27T10:37:00Z")
    event = {"title": "family camping weekend", "decay_days": 14, "turns": [t]}
    server.script(extraction(t, "Melanie camped with her family", events=[event]), step="extract")
    later.sleep().run()
    assert later.profile.events() == []  # active: none
    snap = later.profile.snapshot()
    assert snap is not None and "camping" not in snap.text and snap.data["events"] == []
    [camping] = later.profile.events(active=None)
    # no time words: dated the day it was told, relevant 14 days after that day
    assert (camping.status, camping.closed_at) == ("closed", "2023-07-11T23:59:59Z")
    assert (camping.said_at, camping.retired_at) == ("2023-06-27T10:37:00Z", to_text(LATER))


def test_a_closed_fact_ends_when_its_successor_begins(agent: Agent, server: LLMServer) -> None:
    """Night by night: applied for adoption (June) closes researching adoption (May) at the
    June turn's own time — even when the model takes 13 s and the clock moves meanwhile."""
    clock = agent.clock
    clock.set(dt.datetime(2023, 5, 9, 3, 0, tzinfo=dt.UTC))  # the night after the session
    t1 = said(agent, "s1", "I'm researching adoption agencies.", MAY)
    server.script(extraction(t1, "Caroline researches adoption"), step="extract")
    new = {"observation": 1, "action": "new", "category": "adoption", "value": "researching"}
    server.script({"decisions": [new]}, step="classify")
    agent.sleep().run()
    [researching] = agent.profile.facts()

    clock.set(dt.datetime(2023, 6, 10, 3, 0, tzinfo=dt.UTC))
    june = "2023-06-09T19:55:00Z"
    t2 = said(agent, "s2", "I applied to adopt a child!", june)
    server.script(extraction(t2, "Caroline applied to adopt", "contradiction"), step="extract")
    contra = {"observation": 1, "action": "contradict", "fact_id": researching.id}
    server.script({"decisions": [{**contra, "value": "applied to adopt"}]}, step="classify")
    server.script({"decisions": [{"new_fact_id": -1, "decision": "accept_new"}]}, step="arbitrate")

    def slow_model(event: StepEvent) -> None:
        if event.phase == "start":
            clock.advance(seconds=13)  # each step takes 13 s of wall time

    report = agent.sleep().run(progress=slow_model)
    assert report.status == "done", report.lines()
    old = agent.profile.fact(researching.id)
    [applied] = agent.profile.facts(status="suspected")
    assert old.status == "closed" and old.valid_to == applied.valid_from == june
    assert old.retired_at == applied.created_at  # both recorded by the one apply
    assert old.retired_at > "2023-06-10T03:00:00Z"  # record time: when the run applied
    changes = {(c.fact_id, c.to_status): (c.at, c.recorded_at) for c in agent.profile.timeline(applied.id).changes}  # fmt: skip
    assert changes[(researching.id, "closed")][0] == changes[(applied.id, "suspected")][0] == june


def test_a_year_replays_night_by_night_in_valid_time(agent: Agent, server: LLMServer) -> None:
    """A year of monthly sessions, each slept on the night after through the clock seam: the
    fact heard every month is confirmed by the second session, matures (≥ 90 days, ≥ 3
    evidence) and is established (3+ sessions spanning 90 days) in the conversation's time; a
    passing mood expires within its week."""
    clock = agent.clock
    months = [dt.datetime(2023, m, 8, 13, 0, tzinfo=dt.UTC) for m in range(1, 13)]
    pottery = None
    for n, at in enumerate(months, 1):
        turn = said(agent, f"month-{n}", "Pottery class again tonight, I love it.", to_text(at))
        obs = extraction(turn, "Melanie does pottery")
        if n == 2:
            mood = {"type": "statement", "topic": "mood", "text": "Melanie is exhausted", "turns": [turn]}  # fmt: skip
            obs["observations"] = [*obs["observations"], mood]  # type: ignore[list-item]
        server.script(obs, step="extract")
        if pottery is None:
            first = {"observation": 1, "action": "new", "category": "hobby", "value": "pottery"}
            server.script({"decisions": [first]}, step="classify")
        else:
            again = [{"observation": 1, "action": "support", "fact_id": pottery}]
            if n == 2:
                mood_fact = {"observation": 2, "action": "new", "category": "mood"}
                again.append({**mood_fact, "value": "exhausted", "decay_days": 7})
            server.script({"decisions": again}, step="classify")
        clock.set(at + dt.timedelta(hours=14))  # the nightly sleep
        assert agent.sleep().run().status == "done"
        pottery = pottery or agent.profile.facts(category="hobby")[0].id

    hobby = agent.profile.fact(pottery)
    assert (hobby.valid_from, hobby.last_seen_at) == (to_text(months[0]), to_text(months[-1]))
    assert hobby.status == "established" and hobby.decay_days == 180  # matured in 2023
    changes = {c.to_status: c.at for c in agent.profile.timeline(pottery).changes}
    assert changes["confirmed"] == to_text(months[1])  # when the second session said it
    assert changes["established"] == to_text(months[3])  # 8 April: 90 days after 8 January
    [mood] = agent.profile.facts(category="mood")
    assert (mood.status, mood.valid_to) == ("closed", "2023-02-15T13:00:00Z")  # its week, 2023
    everything = [hobby, mood, *agent.profile.events(active=None)]
    assert all("2023-01-01" <= f.valid_from < "2024" for f in everything)
    assert len(agent.profile.runs(50)) == 12


def test_a_fact_inferred_from_three_sessions_starts_with_the_third(
    later: Agent, server: LLMServer
) -> None:
    """A pattern is seen once its last cited session was said: "as of" any day before the third
    session does not show a "values" fact inferred from three, and it is valid from then."""
    days = ("2023-01-14T10:00:00Z", "2023-03-02T18:30:00Z", "2023-05-20T09:15:00Z")
    turns = {
        f"s{n}": said(later, f"s{n}", "Honesty matters more to me than being liked.", at)
        for n, at in enumerate(days)
    }

    def extract(text: str) -> dict[str, object]:
        session = re.search(r"^## Session (\S+)", text, re.MULTILINE)[1]  # type: ignore[index]
        return extraction(turns[session], "Caroline puts honesty first", "behaviour")

    server.follow("extract", extract)
    habit = {"category": "values", "value": "values honesty", "observations": [1, 2, 3]}
    server.default("behaviour", {"facts": [habit]})
    assert later.sleep().run().status == "done"
    [fact] = [f for f in later.profile.facts() if f.category == "values"]
    assert (fact.source_type, fact.valid_from) == ("inferred", days[2])
    assert [f.id for f in later.profile.as_of("2023-05-19").facts] == []
    assert fact.id in [f.id for f in later.profile.as_of("2023-05-21").facts]


#: Nurse in January (a probe raised), again in February, a teacher from late February (the
#: change arbitration accepts, closing the nurse fact): (session, words, said, type).
JOBS = [
    ("s0", "I work as a nurse.", "2023-01-14T10:00:00Z", "statement"),
    ("s1", "Still a nurse, long shifts.", "2023-02-10T10:00:00Z", "statement"),
    ("s2", "I'm a teacher now.", "2023-02-20T10:00:00Z", "contradiction"),
]


def _jobs(agent: Agent, server: LLMServer, stages: list[list[int]]) -> list[tuple[object, ...]]:
    """`JOBS` fed in `stages`, a sleep after each: the questions as they ended."""
    turns: dict[str, int] = {}

    def extract(text: str) -> dict[str, object]:
        session = re.search(r"^## Session (\S+)", text, re.MULTILINE)[1]  # type: ignore[index]
        _, words, _, kind = next(j for j in JOBS if j[0] == session)
        return extraction(turns[session], words, kind)

    def classify(text: str) -> dict[str, object]:
        nurse = re.search(r"^\[(-?\d+)\] family: nurse", text, re.MULTILINE)
        decisions: list[dict[str, object]] = []
        first_nurse = None
        for line in text.split("## Observations", 1)[1].splitlines():
            if not (m := re.match(r"^(\d+)\. ", line)):
                continue
            d: dict[str, object] = {
                "observation": int(m[1]),
                "category": "family",
                "decay_days": 30,
            }
            if "teacher" in line:
                to = {"fact_id": int(nurse[1])} if nurse else {"earlier": first_nurse}
                decisions.append({**d, "action": "contradict", "value": "teacher", **to})
            elif nurse:
                decisions.append({**d, "action": "support", "fact_id": int(nurse[1])})
            elif first_nurse:
                decisions.append({**d, "action": "support", "earlier": first_nurse})
            else:
                first_nurse = int(m[1])
                decisions.append({**d, "action": "new", "value": "nurse"})
        return {"decisions": decisions}

    def arbitrate(text: str) -> dict[str, object]:
        new = re.findall(r"^new_fact_id (-?\d+)", text, re.MULTILINE)
        return {"decisions": [{"new_fact_id": int(n), "decision": "accept_new"} for n in new]}

    for step, answer in (("extract", extract), ("classify", classify), ("arbitrate", arbitrate)):
        server.follow(step, answer)
    for stage in stages:
        for n in stage:
            session, words, at, _ = JOBS[n]
            turns[session] = said(agent, session, words, at)
        assert agent.sleep().run().status == "done"
    facts = {f.id: f.value for f in agent.profile.facts()}
    return sorted(
        (s.kind, facts.get(s.fact_id or 0), s.outcome, s.valid_from, s.valid_to)
        for s in agent.profile.strategies(status=None)
    )


@pytest.mark.parametrize("stages", [[[0], [1], [2]], [[0], [2]]])
def test_questions_end_as_in_one_go_when_arbitration_closes_their_fact(
    tmp_path: Path, server: LLMServer, engine_env: str, stages: list[list[int]]
) -> None:
    """A session a night on a clock in 2026: the first stage lapses the nurse probe (and
    expires the fact) before the later words that answer it, or the change that closes it by
    arbitration, arrive; the questions end as in one go (answered; obsolete with its fact)."""

    def agent(name: str) -> Agent:  # on PostgreSQL, a namespace of its own
        own = {"database_user": f"{Settings.load().database_user}{name}"}
        pg = Settings.load().database_url
        return Agent(tmp_path / name, server.url, ManualClock(LATER), **(own if pg else {}))

    one, staged = agent("one"), agent("staged")
    try:
        in_one_go = _jobs(one, server, [[n for stage in stages for n in stage]])
        assert _jobs(staged, server, stages) == in_one_go
    finally:
        one.close()
        staged.close()
