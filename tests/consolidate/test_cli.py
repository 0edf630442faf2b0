"""`tideline sleep|profile|fact|runs` against the scripted OpenAI-protocol server: the CLI drives
`app.sleep` and `app.profile` end to end, JSON on stdout, one-line errors on stderr, exit codes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.consolidate.story import REPLY, SESSION, USER, script
from tests.helpers import wait_until
from tests.llm_server import Answer, LLMServer, point_cli_at
from tideline.app import Tideline
from tideline.cli.main import app as cli
from tideline.config import Settings
from tideline.consolidate import SleepReport
from tideline.profile import FactDraft

pytestmark = pytest.mark.engines

runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def run_json(*args: str, code: int = 0) -> Any:
    got, out, err = run(*args, "--json")
    assert got == code, err
    return json.loads(out)


@pytest.fixture
def llm(server: LLMServer, monkeypatch: pytest.MonkeyPatch, engine_env: str) -> LLMServer:
    """The CLI's settings point at the scripted server (no embedder: the story needs none)."""
    return point_cli_at(server, monkeypatch)


@pytest.fixture
def agent(llm: LLMServer) -> Iterator[Tideline]:
    """The agent the CLI opens (same home and settings), with the story's conversation."""
    app = Tideline(Settings.load())
    turn = app.memory.sync_turn(SESSION, "user", USER).id
    app.memory.sync_turn(SESSION, "assistant", REPLY)
    script(llm, turn)
    yield app
    app.close()


def test_dry_run_applies_nothing_then_sleep_forms_facts_with_evidence(agent: Tideline) -> None:
    before = agent.profile.counts()
    plan = run_json("sleep", "--dry-run")
    assert plan["status"] == "planned" and plan["dry_run"] and plan["run_id"] is None
    assert plan["plan"]["NewFact"] == 2 and plan["plan"]["SessionProcessed"] == 1
    assert agent.profile.counts() == before and agent.profile.runs() == []

    code, out, err = run("sleep")
    assert code == 0, err
    assert out.splitlines()[0].startswith("sleep done in ") and "(run #1)" in out
    assert "applied: 2 new facts, " in out and "1 snapshot, " in out and "tokens: " in out
    assert " 2. extract            done" in err and "14. mark_processed" in err  # step lines

    facts = run_json("profile")["facts"]
    assert sorted(f["value"] for f in facts) == ["lives in Osaka", "works as a nurse"]
    turn = facts[0]["evidence"][0]["turn_id"]
    assert all([e["text"] for e in f["evidence"]] == [USER] for f in facts)
    code, out, _ = run("profile", "--category", "city")
    said = facts[0]["evidence"][0]["said_at"][:10]  # the evidence line says when it was said
    assert code == 0 and "user\n  city\n" in out and f"turn {turn}, said {said}: {USER}" in out
    assert run_json("profile", "--subject", "Aiko")["facts"] == []

    (record,) = run_json("runs")
    assert record["status"] == "done" and record["tokens_in"] > 0 and record["tokens_out"] > 0
    again = run_json("sleep")
    assert again["status"] == "nothing" and again["run_id"] == 2


def test_reject_and_close_keep_the_row_and_show_on_the_timeline(agent: Tideline) -> None:
    assert run("sleep")[0] == 0
    city, job = (
        f.id for f in agent.profile.facts(category="city") + agent.profile.facts(category="job")
    )
    rows = agent.profile.counts()["facts"]

    rejected = run_json("fact", "reject", str(city), "--why", "I moved back to Tokyo")
    assert rejected["status"] == "rejected" and rejected["valid_to"]
    assert rejected["rejected_why"] == "I moved back to Tokyo" and rejected["evidence"]
    closed = run_json("fact", "close", str(job))
    assert closed["status"] == "closed" and closed["valid_to"]
    assert agent.profile.counts()["facts"] == rows  # nothing deleted

    timeline = run_json("fact", "show", str(city))
    assert [(c["from_status"], c["to_status"]) for c in timeline["changes"]] == [
        (None, "suspected"),
        ("suspected", "rejected"),
    ]
    assert timeline["changes"][0]["run_id"] == 1 and timeline["changes"][1]["run_id"] is None
    code, out, _ = run("fact", "show", str(city))
    assert code == 0 and "suspected → rejected: I moved back to Tokyo (by hand)" in out

    assert run_json("profile")["facts"] == []
    assert {f["status"] for f in run_json("profile", "--status", "all")["facts"]} == {
        "rejected",
        "closed",
    }
    code, out, err = run("fact", "close", str(city))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"error: fact #{city} is rejected, which is final")
    code, _, err = run("fact", "reject", "999", "--why", "no")
    assert code == 2 and "fact #999 does not exist" in err and err.count("\n") == 1
    assert run("fact", "reject", str(job))[0] == 2  # --why is required


def t0_text(block: dict[str, Any]) -> str:
    """The identity block's T0 (the snapshot) as text."""
    [t0] = [s for s in block["sections"] if s["tier"] == "T0"]
    return "\n".join(i["text"] for p in t0["parts"] for i in p["items"])


def test_a_correction_leaves_the_identity_block_at_once(agent: Tideline) -> None:
    assert run("sleep")[0] == 0
    [city] = agent.profile.facts(category="city")
    assert "lives in Osaka" in t0_text(run_json("inject"))

    run_json("fact", "reject", str(city.id), "--why", "I moved back to Tokyo")

    identity = run_json("inject")
    assert "lives in Osaka" not in t0_text(identity) and "works as a nurse" in t0_text(identity)
    assert "lives in Osaka" not in identity["text"]  # nor anywhere else in the block
    [job] = agent.profile.facts(category="job")
    run_json("fact", "close", str(job.id), "--why", "changed jobs")
    assert "works as a nurse" not in run_json("inject")["text"]


def test_without_an_llm_the_rule_steps_run_and_the_skipped_steps_are_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TIDELINE_EMBEDDER", "none")
    app = Tideline(Settings.load())
    app.memory.sync_turn(SESSION, "user", USER)
    cs = app.profile.read().changeset()  # a fact long expired: the rule steps close it
    cs.add_fact(
        FactDraft("user", "city", "lives in Tokyo", decay_days=1, valid_from="2023-05-08T09:00:00Z")
    )
    app.profile.apply(cs)
    app.close()
    code, out, err = run("sleep")
    assert code == 6, err  # skipped: not done, not failed (docs/sleep.md)
    assert out.startswith("sleep skipped in ") and "(run #1): no LLM configured (set" in out
    # what the rule steps wrote, in words, and said applied: it was (never "not applied")
    assert "applied: 1 status change, 1 question, 1 question settled, 1 snapshot (profile" in out
    assert "not applied" not in out and "RebuildSnapshot" not in out
    assert "LLM steps skipped: extract, behaviour, classify; rule parts only: " in out
    assert (out + err).count("no LLM configured") == 1  # why, once (it was ~10 times)
    assert " 4. classify           skipped" in err and "skipped: no LLM" in err
    report = run_json("sleep", code=6)
    assert report["status"] == "skipped" and report["reason"].startswith("no LLM configured")
    assert report["skipped"]["classify"] == "skipped: no LLM"
    app = Tideline(Settings.load())
    try:
        assert [r.status for r in app.profile.runs()] == ["skipped", "skipped"]
        assert app.profile.read().processed == {}  # the session waits for an LLM
    finally:
        app.close()


def test_a_second_sleep_is_busy(agent: Tideline, llm: LLMServer) -> None:
    llm.script(Answer(llm.defaults["extract"].content, delay=30), step="extract")
    reports: list[SleepReport] = []
    first = threading.Thread(target=lambda: reports.append(agent.sleep.run()))
    first.start()
    try:
        wait_until(lambda: "extract" in llm.asked, timeout=10)
        code, out, err = run("sleep")
        assert code == 5 and out == "" and err.count("\n") == 1
        assert err.startswith("error: another sleep is running on ") and "pid " in err
    finally:
        llm.closing.set()  # the slow answer comes now
        first.join(timeout=30)
    assert [r.status for r in reports] == ["done"]


def test_a_run_past_its_timeout_stops_and_applies_nothing(agent: Tideline, llm: LLMServer) -> None:
    llm.script(Answer(llm.defaults["extract"].content, delay=1.0), step="extract")
    code, out, err = run("sleep", "--timeout", "0.5")
    assert code == 1 and out.startswith("sleep failed in ")
    assert (
        "error: step 3 behaviour failed, nothing applied: the run took longer than its 0.5 s" in err
    )
    assert agent.profile.counts()["facts"] == 0 and agent.profile.read().processed == {}
    assert [(r.status, r.version) for r in agent.profile.runs()] == [("failed", None)]
