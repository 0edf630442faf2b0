"""The daily pipeline: records per layer, the budget cap, failures retried, finished layers kept."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.consolidate.dream.conftest import CONVERSATION, DAY, Day
from tests.helpers import killed_at_marker
from tests.llm_server import LLMServer
from tideline.consolidate import StepEvent
from tideline.consolidate.dream import LAYER_NAMES
from tideline.errors import InvalidInput

pytestmark = pytest.mark.engines


def keep_first_turn(server: LLMServer, t: list[int]) -> None:
    server.default(
        "dream_solidify",
        {"memories": [{"gesture": "They quit the bank.", "importance": 4, "source_links": [t[0]]}]},
    )


def test_every_layer_runs_in_order_and_is_recorded(day: Day, server: LLMServer) -> None:
    keep_first_turn(server, day.say("s1", CONVERSATION))
    seen: list[tuple[str, str]] = []

    report = day.dream().run(date=DAY, progress=lambda e: seen.append((e.name, e.phase)))

    assert report.status == "done", report.lines()
    assert [r.name for r in report.layers] == list(LAYER_NAMES)
    assert seen == [(n, p) for n in LAYER_NAMES for p in ("start", "end")]
    # one memory only: the drift has nowhere to go and asks nothing
    assert [s for s in server.asked if s.startswith("dream_")] == [
        "dream_solidify", "dream_digest", "dream_sleep",
    ]  # fmt: skip
    run = day.dream().runs()[0]
    assert (run.day, run.status) == (DAY, "done")
    assert [r.layer for r in run.records] == list(LAYER_NAMES)
    assert run.tokens_in == report.tokens_in > 0
    assert run.prompt_versions == {
        "dream_solidify": 1, "dream_digest": 2, "dream_drift": 1, "dream_sleep": 2,
    }  # fmt: skip
    assert report.layer("drift").note.startswith("nowhere to drift")
    assert report.written["dreams"] == [n.id for n in day.narratives("dream")]


def test_the_budget_cap_stops_the_run_cleanly_and_the_record_says_so(
    day: Day, server: LLMServer
) -> None:
    keep_first_turn(server, day.say("s1", CONVERSATION))

    report = day.dream(budget=400).run(date=DAY)

    assert report.status == "stopped"
    solidify = report.layer("solidify")
    assert solidify.status == "stopped" and solidify.error.startswith("budget:")
    assert {r.status for r in report.layers[1:]} == {"pending"}
    assert day.narratives() == [] and server.asked == []  # refused before it was sent
    run = day.dream().runs()[0]
    assert run.status == "stopped" and "budget" in run.errors[0]
    assert [(r.layer, r.status) for r in run.records] == [("solidify", "stopped")]

    again = day.dream(budget=40000).run(date=DAY)
    assert again.status == "done" and again.layer("solidify").status == "done"
    assert again.tokens_in + again.tokens_out <= 40000


def test_a_failing_layer_keeps_earlier_results_and_is_retried_next_run(
    day: Day, server: LLMServer
) -> None:
    keep_first_turn(server, day.say("s1", CONVERSATION))
    server.script("not json", "still not json", step="dream_digest")

    failed = day.dream().run(date=DAY)

    assert failed.status == "failed"
    assert [r.status for r in failed.layers] == [
        "done",
        "done",
        "done",
        "failed",
        "pending",
        "pending",
    ]
    assert "dream_digest" in failed.layer("comb").error
    kept = day.narratives()
    assert [n.gesture for n in kept] == ["They quit the bank."]

    retried = day.dream().run(date=DAY)

    assert retried.status == "done", retried.lines()
    assert [r.status for r in retried.layers] == ["earlier"] * 3 + ["done"] * 3
    assert day.narratives()[0].id == kept[0].id and len(day.narratives("dream")) == 1
    assert server.asked.count("dream_solidify") == 1


def test_an_error_at_a_layer_end_undoes_that_layer_only(day: Day, server: LLMServer) -> None:
    keep_first_turn(server, day.say("s1", CONVERSATION))

    def fail_at_dream_end(event: StepEvent) -> None:
        if (event.name, event.phase) == ("dream", "end"):
            raise RuntimeError("killed at the boundary")

    report = day.dream().run(date=DAY, progress=fail_at_dream_end)

    assert report.layer("dream").status == "failed"
    assert day.narratives("dream") == [] and len(day.narratives("narrative")) == 1
    assert day.dream().run(date=DAY).layer("dream").written["dreams"]


def test_a_run_stopped_in_the_process_is_recorded_failed_saying_what_stopped_it(
    day: Day, server: LLMServer
) -> None:
    """Ctrl-C at the comb layer: the run's record is finished, failed, with what stopped it (it
    was left `running` before the runner); only a killed process leaves a run `running`."""
    keep_first_turn(server, day.say("s1", CONVERSATION))

    def interrupt_at_comb(event: StepEvent) -> None:
        if (event.name, event.phase) == ("comb", "start"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        day.dream().run(date=DAY, progress=interrupt_at_comb)

    run = day.dream().runs()[0]
    assert (run.status, run.errors) == ("failed", ["stopped by KeyboardInterrupt"])
    assert run.finished_at is not None and run.tokens_in > 0
    assert [(r.layer, r.status) for r in run.records] == [
        ("solidify", "done"), ("sleep", "done"), ("scripts", "done"),
    ]  # fmt: skip
    retried = day.dream().run(date=DAY)  # the lock was let go; comb onwards run now
    assert [r.status for r in retried.layers] == ["earlier"] * 3 + ["done"] * 3


def test_without_an_llm_the_llm_layers_wait_for_one(day: Day, server: LLMServer) -> None:
    day.say("s1", CONVERSATION)

    report = day.dream(llm=False).run(date=DAY)

    assert report.status == "skipped" and report.reason.startswith("no LLM configured")
    assert {r.name: r.status for r in report.layers} == {
        "solidify": "skipped", "sleep": "skipped", "scripts": "done",
        "comb": "skipped", "drift": "skipped", "dream": "skipped",
    }  # fmt: skip
    assert report.layer("solidify").note == "skipped: no LLM"  # the reason is the run's, once
    assert day.dream(llm=False).runs(1)[0].status == "skipped"
    later = day.dream().run(date=DAY)  # the sleep layer too: its LLM steps never ran
    assert [r.name for r in later.layers if r.status == "done"] == [
        "solidify",
        "sleep",
        "comb",
        "drift",
        "dream",
    ]


def test_a_dry_run_asks_but_writes_and_records_nothing(day: Day, server: LLMServer) -> None:
    keep_first_turn(server, day.say("s1", CONVERSATION))

    report = day.dream().run(date=DAY, layers=["solidify", "scripts"], dry_run=True)

    assert report.status == "planned" and report.run_id is None
    assert report.layer("solidify").changes["memories"] == 1
    assert report.layer("scripts").status == "skipped"
    assert day.narratives() == [] and day.dream().runs() == []


def test_layers_are_chosen_by_name_and_run_in_order(day: Day) -> None:
    report = day.dream().run(date=DAY, layers=["dream", "solidify"])
    assert [r.name for r in report.layers] == ["solidify", "dream"]
    with pytest.raises(InvalidInput, match="choose from"):
        day.dream().run(date=DAY, layers=["nap"])


def test_a_dream_killed_mid_run_keeps_what_it_spent_and_the_next_run_says_so(
    tmp_path: Path, server: LLMServer, engine_env: str
) -> None:
    """kill -9 after the solidify and sleep layers asked the model: the run row holds their
    tokens (recorded as they are spent), and the next run closes it as interrupted."""
    home = tmp_path / "agent"
    day = Day(home, server.url)
    keep_first_turn(server, day.say("s1", CONVERSATION))
    day.agent.close()
    root = Path(__file__).resolve().parents[3]
    marker = tmp_path / "marker"
    args = [sys.executable, "-m", "tests.consolidate.dream.dreamer", str(home), server.url]
    killed_at_marker([*args, "scripts", str(marker)], root, marker, timeout=120)
    asked = len(server.chats)
    assert asked >= 2  # solidify and the sleep layer's extraction, at least
    again = Day(home, server.url)
    try:
        [killed] = again.dream().runs()
        assert killed.status == "running" and killed.tokens_in > 0 and killed.tokens_out > 0
        spent = (killed.tokens_in, killed.tokens_out)
        assert again.dream().run(date=DAY).status == "done"
        first = next(r for r in again.dream().runs() if r.id == killed.id)
        assert first.status == "failed" and first.errors[0].startswith("interrupted")
        assert (first.tokens_in, first.tokens_out) == spent
    finally:
        again.agent.close()
