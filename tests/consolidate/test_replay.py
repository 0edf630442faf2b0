"""Replay invariance: the same history gives the same profile however it arrives.

A year of one person's sessions (January to December 2023) is imported into agents whose clock
says December 2026 and slept on: in one go, in stages (a sleep after each), one session a night
on a fixed clock, and lived night by night with the clock moving to the morning after each
session. The model is a scripted one whose answers follow what it is shown (`Model`): each turn
is one observation; classification supports the live fact that says the same thing, replaces the
live fact of the same topic that a change speaks of, and otherwise makes a new fact; arbitration
accepts every change. So every difference between the stagings is the pipeline's own.

The history exercises what staging used to break: a fact expires between two sessions and is
said again (a new fact, in one go too), a fact closed by expiry at the end of one stage is heard
again in the next before it would have expired (the same fact, supported), a fact backed by three
sessions over 90 days becomes established and later expires, maturity lengthens a fact's life,
a change supersedes a fact, and promotions are dated when their rule was met.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.consolidate.conftest import Agent
from tests.helpers import shared_data
from tests.llm_server import LLMServer
from tideline.clock import ManualClock, from_text
from tideline.config import Settings

pytestmark = pytest.mark.engines

NOW = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)

#: each session: when, and its turns — (the words, the topic, the fact they say, a change?)
SESSIONS: list[tuple[str, list[tuple[str, str, str, bool]]]] = [
    ("2023-01-14T10:00:00Z", [
        ("I just started as a nurse at St. Mary's hospital.", "job", "nurse at St. Mary's", False),
        ("I live in Porto.", "home", "lives in Porto", False),
        ("I run at dawn on Sundays.", "sport", "runs at dawn on Sundays", False),
    ]),
    ("2023-03-02T18:30:00Z", [
        ("I'm training for the Lisbon half marathon.", "goal", "trains for the half marathon", False),
        ("Still a nurse at St. Mary's, long shifts.", "job", "nurse at St. Mary's", False),
        ("Running at dawn again this Sunday.", "sport", "runs at dawn on Sundays", False),
    ]),
    ("2023-05-20T09:15:00Z", [
        ("Training for the half marathon goes well.", "goal", "trains for the half marathon", False),
        ("We are thinking about adopting a dog.", "pet", "thinks about adopting a dog", False),
        ("I ran at dawn, as every Sunday.", "sport", "runs at dawn on Sundays", False),
    ]),
    ("2023-08-11T20:00:00Z", [
        ("We adopted a dog named Biscuit!", "pet", "adopted a dog named Biscuit", True),
    ]),
    ("2023-10-29T11:00:00Z", [
        ("I moved to Lyon for a job at a new hospital.", "job", "works at a hospital in Lyon", True),
        ("Sunday dawn runs by the Rhône now.", "sport", "runs at dawn on Sundays", False),
    ]),
    ("2023-12-18T19:45:00Z", [
        ("Porto is still where I call home, Biscuit too.", "home", "lives in Porto", False),
    ]),
]  # fmt: skip
SAID = {
    words: (topic, value, change) for _, turns in SESSIONS for words, topic, value, change in turns
}

FACT = re.compile(r"^\[(-?\d+)\] ([^:]+): (.*?) — ")
OBSERVATION = re.compile(r"^(\d+)\. \[[^\]]+\] \([^)]*\) (.*)$")
TURN = re.compile(r"^\[(\d+)\] \S+ [^:]+: (.*)$")


def _section(text: str, title: str) -> list[str]:
    """The lines of a prompt's `## title` section."""
    part = text.split(f"## {title}", 1)[1] if f"## {title}" in text else ""
    return part.split("\n## ", 1)[0].splitlines()[1:]


class Model:
    """The scripted model: answers follow what each request shows (see the module doc)."""

    @staticmethod
    def extract(text: str) -> dict[str, Any]:
        observations, events, people = [], [], []
        for line in _section(text, "Session"):
            m = TURN.match(line)
            if m and m[2] in SAID:
                topic = SAID[m[2]][0]
                observations.append(
                    {"type": "statement", "topic": topic, "text": m[2], "turns": [int(m[1])]}
                )
                if SAID[m[2]][2]:
                    events.append({"title": m[2], "turns": [int(m[1])], "decay_days": 30})
                if "Biscuit" in m[2]:
                    people.append({"name": "Biscuit", "relation": "dog", "details": m[2]})
        said = {"observations": observations, "events": events, "relationships": people}
        return {"summary": "a session", **said}

    @staticmethod
    def classify(text: str) -> dict[str, Any]:
        shown = [m for line in _section(text, "Profile facts") if (m := FACT.match(line))]
        facts = {(m[2], m[3]): int(m[1]) for m in shown}
        topics = {m[2]: int(m[1]) for m in shown}
        decisions, earlier = [], {}
        for line in _section(text, "Observations"):
            m = OBSERVATION.match(line)
            if not m:
                continue
            n, (topic, value, change) = int(m[1]), SAID[m[2]]
            d: dict[str, Any] = {
                "observation": n,
                "category": topic,
                "value": value,
                "decay_days": 90,
            }
            if (topic, value) in facts:
                d |= {"action": "support", "fact_id": facts[topic, value]}
            elif (topic, value) in earlier:
                d |= {"action": "support", "earlier": earlier[topic, value]}
            elif change and topic in topics:
                d |= {"action": "contradict", "fact_id": topics[topic]}
            elif change and topic in {t for t, _ in earlier}:
                d |= {
                    "action": "contradict",
                    "earlier": next(e for (t, _), e in earlier.items() if t == topic),
                }
            else:
                d |= {"action": "new"}
            earlier.setdefault((topic, value), n)
            decisions.append(d)
        return {"decisions": decisions}  # fmt: skip

    @staticmethod
    def edges(text: str) -> dict[str, Any]:
        """Running at dawn is related to training for the half marathon, whenever both show."""
        shown = {m[2]: int(m[1]) for line in text.splitlines() if (m := FACT.match(line))}
        if {"sport", "goal"} <= shown.keys():
            return {
                "edges": [
                    {"kind": "related_to", "from_fact": shown["sport"], "to_fact": shown["goal"]}
                ]
            }
        return {"edges": []}  # fmt: skip

    @staticmethod
    def arbitrate(text: str) -> dict[str, Any]:
        new = re.findall(r"^new_fact_id (-?\d+)", text, re.MULTILINE)
        return {"decisions": [{"new_fact_id": int(n), "decision": "accept_new"} for n in new]}


def live_through(server: LLMServer, stages: list[list[int]], home: Path, moving: bool) -> Agent:
    """An agent of its own (on PostgreSQL, its own namespace) fed the sessions of each stage,
    then slept on; `moving`: the clock stands at the morning after the stage's last session
    (lived night by night), else at `NOW`."""
    for step in ("extract", "classify", "edges", "arbitrate"):
        server.follow(step, getattr(Model, step))
    clock = ManualClock(NOW)
    own = {"database_user": f"{Settings.load().database_user}{home.name}"}
    agent = Agent(home, server.url, clock, **(own if Settings.load().database_url else {}))
    for stage in stages:
        for n in stage:
            at, turns = SESSIONS[n]
            start = from_text(at)
            for i, (words, *_) in enumerate(turns):
                ts = (start + dt.timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
                agent.memory.sync_turn(f"s{n}", "user", words, speaker="Maya", timestamp=ts)
        if moving:
            clock.set(from_text(SESSIONS[stage[-1]][0]) + dt.timedelta(hours=12))
        report = agent.sleep().run()
        assert report.status == "done", report.lines()
    if moving:
        clock.set(NOW)
        assert agent.sleep().run().status == "done"  # what lapsed since, closed
    return agent


def profile_of(agent: Agent, *, record: bool) -> dict[str, Any]:
    """Everything the profile holds, by content (ids differ between agents); `record`: with
    record times too."""
    p = agent.profile
    facts = p.facts(evidence=True)
    name = {f.id: f"{f.category}: {f.value} @{f.valid_from}" for f in facts}
    rec = (lambda *xs: xs) if record else (lambda *xs: ())
    out: dict[str, Any] = {"facts": [], "strategies": [], "events": [], "edges": [], "people": []}
    for f in facts:
        changes = [
            (c.from_status, c.to_status, c.at, c.why, *rec(c.recorded_at))
            for c in p.timeline(f.id).changes
            if c.fact_id == f.id
        ]
        out["facts"].append((
            name[f.id], f.subject, f.status, f.confidence, f.source_type, f.mention_count,
            f.decay_days, f.expires_at, f.valid_to, f.last_seen_at, f.rejected_why,
            name.get(f.supersedes or 0), name.get(f.merged_into or 0),
            sorted((e.text, e.polarity, e.said_at, *rec(e.created_at)) for e in f.evidence),
            changes, *rec(f.created_at, f.retired_at),
        ))  # fmt: skip
    for s in p.strategies(status=None):
        out["strategies"].append((
            s.kind, name.get(s.fact_id or 0), s.question, s.status, s.outcome, s.resolved_why,
            s.valid_from, s.valid_to, *rec(s.created_at, s.resolved_at),
        ))  # fmt: skip
    for e in p.events(active=None):
        out["events"].append((e.title, e.status, e.valid_from, e.valid_to, e.expires_at))
    for r in p.relationships():
        out["people"].append((
            r.name, r.relation, r.details, r.status, r.mention_count, r.first_seen_at,
            r.last_seen_at, *rec(r.created_at),
        ))  # fmt: skip
    for g in p.edges(live=False):
        out["edges"].append((g.kind, name[g.from_fact], name[g.to_fact], g.valid_from, g.valid_to))
    out = {k: sorted(v, key=repr) for k, v in out.items()}
    snapshot = p.snapshot()
    out["snapshot"] = None if snapshot is None else snapshot.text
    for day in ("2023-03-01", "2023-06-01", "2023-09-01", "2023-11-30", "2024-02-01"):
        then = p.as_of(day)  # its text ends with the trajectory then: one per run, not compared
        out[day] = sorted((name[f.id], f.status, f.confidence, f.mention_count) for f in then.facts)
    return out


STAGINGS = {
    "three stages": [[0, 1], [2, 3], [4, 5]],
    "two stages": [[0, 1, 2], [3, 4, 5]],
    "a session a night": [[0], [1], [2], [3], [4], [5]],
}


@pytest.fixture
def in_one_go(tmp_path: Path, server: LLMServer, engine_env: str) -> Iterator[Agent]:
    agent = live_through(server, [[0, 1, 2, 3, 4, 5]], tmp_path / "one", moving=False)
    yield agent
    agent.close()


def test_the_history_in_one_go_is_what_it_says(in_one_go: Agent) -> None:
    """The reference itself: the rules at the valid time of each piece of evidence."""
    p = in_one_go.profile
    by_value = {}
    for f in p.facts():
        by_value.setdefault(f.value, []).append(f)
    [run] = by_value["runs at dawn on Sundays"]
    changes = [(c.to_status, c.at) for c in p.timeline(run.id).changes]
    # established when its third session came 126 days after the first, then expired
    assert ("established", "2023-05-20T09:17:00Z") in changes
    assert ("confirmed", "2023-03-02T18:32:00Z") in changes  # when its second session said it
    assert (run.status, run.decay_days, run.mention_count) == ("closed", 180, 4)
    assert run.valid_to == run.expires_at == "2024-04-26T11:01:00Z"  # matured, then heard in Oct
    # Porto, said in January, expired in April: December's words are a new fact, not support
    assert [f.valid_from for f in by_value["lives in Porto"]] == [
        "2023-01-14T10:01:00Z",
        "2023-12-18T19:45:00Z",
    ]
    [thinking] = by_value["thinks about adopting a dog"]
    [adopted] = by_value["adopted a dog named Biscuit"]
    assert (thinking.valid_to, adopted.supersedes) == (adopted.valid_from, thinking.id)
    assert p.as_of("2026-12-01").facts == []
    [edge] = p.edges(live=False)  # the run and the half marathon, while both were believed
    assert (edge.kind, edge.valid_to) == ("related_to", "2023-08-18T09:15:00Z")
    [dog] = in_one_go.profile.relationships()
    seen = (dog.name, dog.mention_count, dog.first_seen_at[:10], dog.last_seen_at[:10])
    assert seen == ("Biscuit", 2, "2023-08-11", "2023-12-18")
    # every question of 2023 was settled in 2023: answered, made obsolete or lapsed, this run's
    # own included; "as of" a day shows the ones open then as they were then
    questions = p.strategies(status=None)
    assert questions and all(s.valid_to and s.valid_to < "2025" for s in questions)
    assert p.questions() == []
    [probe] = [s for s in questions if s.kind == "probe" and s.fact_id == thinking.id]
    assert (probe.outcome, probe.valid_to) == ("obsolete", adopted.valid_from)  # before lapsing
    then = {s.id: s for s in p.as_of("2023-06-01").strategies}
    assert (then[probe.id].status, then[probe.id].outcome) == ("open", None)


@pytest.mark.parametrize("staging", sorted(STAGINGS))
def test_a_history_in_stages_gives_the_profile_of_one_go(
    staging: str, in_one_go: Agent, tmp_path: Path, server: LLMServer
) -> None:
    staged = live_through(server, STAGINGS[staging], tmp_path / "staged", moving=False)
    try:
        assert profile_of(staged, record=True) == profile_of(in_one_go, record=True)
    finally:
        staged.close()


def test_a_history_lived_night_by_night_gives_the_profile_of_one_go(
    in_one_go: Agent, tmp_path: Path, server: LLMServer
) -> None:
    """The clock at the morning after each session: the same profile in valid time."""
    nightly = live_through(server, STAGINGS["a session a night"], tmp_path / "nightly", moving=True)
    try:
        assert profile_of(nightly, record=False) == profile_of(in_one_go, record=False)
    finally:
        nightly.close()


#: The words a LoCoMo observation is filed under (the first one it holds): the scripted model's
#: notion of "the same fact", so facts are heard again, lapse, mature and are established.
TOPICS = (
    "adopt", "art", "paint", "pottery", "camp", "kids", "school", "counsel", "lgbtq", "support",
    "music", "concert", "book", "read", "run", "hike", "beach", "family", "friend", "job",
    "work", "dog", "cat", "pet", "trip", "travel", "game", "cook", "bake", "garden",
)  # fmt: skip


def locomo_model(agent: Agent, conv: dict[str, Any], sample: str) -> dict[str, Any]:
    """A model built from LoCoMo's own annotations: extraction answers each session with its
    `session_N_observation` items (their turns by dia_id), classification files an observation
    under its speaker and the first of `TOPICS` it names and supports the fact of that file
    that is shown (or was made earlier in the list), else makes one; no file: a fact of its own."""

    def extract(text: str) -> dict[str, Any]:
        n = int(re.search(rf"## Session locomo/{sample}/session_(\d+)", text)[1])  # type: ignore[index]
        by_dia = {
            t.external_id: t.id for t in agent.memory.session_turns(f"locomo/{sample}/session_{n}")
        }
        observations = [
            {
                "type": "statement",
                "topic": speaker.lower(),
                "text": said,
                "about": "user",
                "turns": [
                    by_dia[d] for d in ([dias] if isinstance(dias, str) else dias) if d in by_dia
                ],
            }
            for speaker, items in (conv.get(f"session_{n}_observation") or {}).items()
            for said, dias in items
        ]
        return {"summary": f"session {n}", "observations": observations}  # fmt: skip

    def classify(text: str) -> dict[str, Any]:
        shown = {
            (m[2], m[3]): int(m[1])
            for line in _section(text, "Profile facts")
            if (m := FACT.match(line))
        }
        decisions, earlier = [], {}
        for line in _section(text, "Observations"):
            if not (m := OBSERVATION.match(line)):
                continue
            n, said = int(m[1]), m[2]
            topic = line.split("(statement, ", 1)[1].split(",", 1)[0]
            word = next((w for w in TOPICS if w in said.lower()), None)
            value = f"about {word}" if word else said
            d: dict[str, Any] = {
                "observation": n,
                "category": topic,
                "value": value,
                "decay_days": 60,
            }
            if (topic, value) in shown:
                d |= {"action": "support", "fact_id": shown[topic, value]}
            elif (topic, value) in earlier:
                d |= {"action": "support", "earlier": earlier[topic, value]}
            else:
                d |= {"action": "new"}
            earlier.setdefault((topic, value), n)
            decisions.append(d)
        return {"decisions": decisions}  # fmt: skip

    return {"extract": extract, "classify": classify}


def locomo_through(
    server: LLMServer, conv: dict[str, Any], sample: str, stages: list[list[int]], home: Path
) -> Agent:
    """An agent of its own fed LoCoMo's sessions stage by stage (each stage a file of its own
    sessions, imported), slept on after each, on a clock in 2026."""
    own = {"database_user": f"{Settings.load().database_user}{home.name}"}
    agent = Agent(
        home, server.url, ManualClock(NOW), **(own if Settings.load().database_url else {})
    )
    for step, answer in locomo_model(agent, conv, sample).items():
        server.follow(step, answer)
    head = {k: v for k, v in conv.items() if not k.startswith(("session_", "events_"))}
    for i, stage in enumerate(stages):
        part = {**head, "sample_id": sample}
        for n in stage:
            part |= {
                k: v
                for k, v in conv.items()
                if k == f"session_{n}" or k.startswith(f"session_{n}_")
            }
        source = home.with_name(f"{home.name}-{i}.json")
        source.write_text(json.dumps(part))
        agent.memory.import_file(source, "locomo")
        report = agent.sleep().run()
        assert report.status == "done", report.lines()
    return agent  # fmt: skip


LOCOMO_SESSIONS = 10  # the first ten sessions of each: months of history, seconds of test
#: On PostgreSQL one staging of each conversation beside the one go (the suite's time): thirds
#: for one, a session a night for the other; SQLite tries both on both.
ON_POSTGRESQL = {"conv-26": "thirds", "conv-30": "nightly"}


@pytest.mark.parametrize("sample", ["conv-26", "conv-30"])
def test_a_locomo_conversation_in_stages_gives_the_profile_of_one_go(
    sample: str, tmp_path: Path, server: LLMServer, engine_env: str
) -> None:
    """LoCoMo's first sessions, in one go, in thirds and one session a night: the same profile
    (facts, strategies, clocks, evidence, events, snapshot) with a model built from its
    annotations (`locomo_model`), on both engines (`ON_POSTGRESQL`)."""
    conv = json.loads(shared_data("locomo", f"{sample}.json").read_text())
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    numbers = numbers[:LOCOMO_SESSIONS]
    step = -(-len(numbers) // 3)
    thirds = [numbers[i : i + step] for i in range(0, len(numbers), step)]
    stagings = {"thirds": thirds, "nightly": [[n] for n in numbers]}
    if engine_env == "postgresql":
        stagings = {ON_POSTGRESQL[sample]: stagings[ON_POSTGRESQL[sample]]}
    agents = [
        locomo_through(server, conv, sample, stages, tmp_path / name)
        for name, stages in {"one": [numbers], **stagings}.items()
    ]
    try:
        one, *staged = (profile_of(a, record=True) for a in agents)
        confirmed = [f for f in one["facts"] if any(c[1] == "confirmed" for c in f[14])]
        assert len(one["facts"]) > 30 and confirmed  # the model files enough together
        for other in staged:
            assert other == one
    finally:
        for a in agents:
            a.close()
