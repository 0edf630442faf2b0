"""`tideline dream` and `tideline threads` against the scripted OpenAI-protocol server: a day
imported with `tideline import`, dreamt by the CLI, then read back through injection; the run
record on stdout, layer lines on stderr, exit codes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.consolidate.dream.conftest import CONVERSATION, DAY
from tests.consolidate.test_cli import run, run_json
from tests.llm_server import LLMServer, point_cli_at
from tideline.app import Tideline
from tideline.config import Settings
from tideline.consolidate import DreamBusy
from tideline.consolidate.dream import LAYER_NAMES
from tideline.runs import RunLock

pytestmark = pytest.mark.engines


@pytest.fixture
def llm(server: LLMServer, monkeypatch: pytest.MonkeyPatch, engine_env: str) -> LLMServer:
    """The CLI's settings point at the scripted server (no embedder)."""
    return point_cli_at(server, monkeypatch)


@pytest.fixture
def imported(llm: LLMServer, tmp_path: Path) -> list[int]:
    """The day's conversation, imported by `tideline import`: its turn ids, in order."""
    chat = tmp_path / "day.jsonl"
    chat.write_text(
        "".join(
            json.dumps({"role": role, "content": text, "timestamp": f"{DAY}T09:{i:02d}:00Z"}) + "\n"
            for i, (role, text) in enumerate(CONVERSATION)
        )
    )
    code, _, err = run("import", str(chat), "--format", "openai", "--session", "s1")
    assert code == 0, err
    with opened() as app:
        return [t.id for t in app.memory.raw.recent(len(CONVERSATION), "s1")]


@contextmanager
def opened() -> Iterator[Tideline]:
    """The agent the CLI opens (same home and settings), closed after use."""
    app = Tideline(Settings.load())
    try:
        yield app
    finally:
        app.close()


def script_the_day(llm: LLMServer, t: list[int]) -> None:
    """Two memories from chosen turns, a self-concept sentence and a thread on them."""
    llm.default(
        "dream_solidify",
        {
            "memories": [
                {
                    "gesture": "They quit their job at the bank, scared but sure.",
                    "importance": 4,
                    "emotional": 4,
                    "tags": ["work"],
                    "source_links": [t[0], t[1]],
                },
                {
                    "gesture": "They want to open a bakery with their sister Mia.",
                    "importance": 4,
                    "related_entities": ["Mia"],
                    "tags": ["bakery"],
                    "source_links": [t[2], t[4]],
                },
            ]
        },
    )
    llm.default(
        "dream_digest",
        {
            "self_concept": [
                {"text": "I stay steady when people leap into the unknown.", "rests_on": [1, 2]}
            ],
            "threads_open": [
                {"title": "Where will the bakery be?", "why": "undecided", "raised_by": [2]}
            ],
        },
    )


def test_a_day_imported_then_dreamt_by_the_cli_is_remembered_and_injected(
    llm: LLMServer, imported: list[int]
) -> None:
    t = imported
    script_the_day(llm, t)

    code, out, err = run("dream", "--date", DAY)

    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"dream {DAY} done in ") and "(run #1)" in lines[0]
    assert lines[1].startswith("wrote: narratives #1, #2;") and "dreams #" in lines[1]
    assert lines[2].startswith("tokens: ") and "of a 40000-token budget" in lines[2]
    for n, name in enumerate(LAYER_NAMES, 1):  # progress: each layer's line on stderr
        assert f"{n:>2}. {name}" in err
    with opened() as app:
        # narratives linked to exactly their turns
        lived = {
            n.gesture: n for n in app.memory.narratives.all(links=True) if n.kind == "narrative"
        }
        assert sorted(lived["They quit their job at the bank, scared but sure."].source_links) == [
            t[0],
            t[1],
        ]
        assert sorted(lived["They want to open a bakery with their sister Mia."].source_links) == [
            t[2],
            t[4],
        ]
        # a dream of importance 1
        dreams = [n for n in app.memory.narratives.all() if n.kind == "dream"]
        assert len(dreams) == 1 and dreams[0].importance == 1
        assert all(dreams[0].weight < n.weight for n in lived.values())
        # every step recorded with its tokens
        run_record = app.dream.runs()[0]
        assert [r.layer for r in run_record.records] == list(LAYER_NAMES)
        assert all(r.status == "done" for r in run_record.records)
        tokens = {r.layer: r.tokens_in + r.tokens_out for r in run_record.records}
        assert all(tokens[layer] > 0 for layer in ("solidify", "sleep", "comb", "dream"))
        assert tokens["scripts"] == 0  # rules only
        assert run_record.tokens_in + run_record.tokens_out == sum(tokens.values())

    # the self-concept in T0 (with its grounds), the thread in T3, no dream anywhere
    block = run_json("inject")
    t0 = next(s for s in block["sections"] if s["tier"] == "T0")
    concept = next(p for p in t0["parts"] if p["title"].startswith("self-concept"))
    assert concept["items"][0]["text"].startswith("I stay steady when people leap")
    assert concept["items"][0]["extra"] == "rests on n:1, n:2"
    t3 = next(s for s in block["sections"] if s["tier"] == "T3")
    threads = next(p for p in t3["parts"] if p["title"].startswith("open threads"))
    assert [i["text"] for i in threads["items"]] == ["Where will the bakery be? — undecided"]
    assert dreams[0].gesture not in json.dumps(block)

    listed = run_json("threads")["threads"]
    assert [(x["title"], x["memories"]) for x in listed] == [("Where will the bakery be?", [2])]

    code, out, _ = run("dream-runs")  # the record, layer by layer, with tokens
    assert code == 0 and out.startswith(f"#1 {DAY} done  ") and "of 40000, " in out
    assert (
        re.search(r"\n    solidify  done     \d+\+\d+ tokens\n", out)
        and "\n    scripts   done\n" in out
    )
    assert run_json("dream-runs", "--limit", "1")[0]["records"][0]["layer"] == "solidify"

    again = run_json("dream", "--date", DAY)  # the same day: nothing redone, nothing asked
    assert [r["status"] for r in again["layers"]] == ["earlier"] * len(LAYER_NAMES)
    assert again["written"] == {} and again["tokens_in"] == 0


def test_without_an_llm_the_cli_says_skipped_once_and_exits_six(
    imported: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIDELINE_LLM_BASE_URL")

    code, out, err = run("dream", "--date", DAY)

    assert code == 6, err  # skipped: not done (docs/dream.md)
    assert out.startswith(f"dream {DAY} skipped in ") and "no LLM configured (set" in out
    assert (out + err).count("no LLM configured") == 1  # why, once
    skipped = next(line for line in out.splitlines() if line.startswith("layers skipped"))
    assert "solidify, sleep, comb, drift, dream" in skipped
    report = run_json("dream", "--date", DAY, code=6)
    assert report["status"] == "skipped" and report["reason"].startswith("no LLM configured")
    assert {r["name"]: r["status"] for r in report["layers"]} == {
        "solidify": "skipped", "sleep": "skipped", "scripts": "earlier",
        "comb": "skipped", "drift": "skipped", "dream": "skipped",
    }  # fmt: skip
    code, out, _ = run("dream-runs")
    assert code == 0 and f"{DAY} skipped" in out and "(none)" in out


def test_layers_dry_run_and_json(llm: LLMServer, imported: list[int]) -> None:
    script_the_day(llm, imported)

    plan = run_json("dream", "--date", DAY, "--layers", "solidify", "--dry-run")

    assert plan["status"] == "planned" and plan["run_id"] is None
    assert [r["name"] for r in plan["layers"]] == ["solidify"]
    assert plan["layers"][0]["changes"]["memories"] == 2
    code, out, _ = run("dream", "--date", DAY, "--layers", "dream,solidify", "--dry-run")
    assert code == 0 and out.splitlines()[1].startswith("nothing written (dry run)")
    with opened() as app:
        assert app.memory.narratives.all() == [] and app.dream.runs() == []

    report = run_json("dream", "--date", DAY, "--layers", "dream", "--layers", "solidify")
    assert [r["name"] for r in report["layers"]] == ["solidify", "dream"]
    assert report["written"]["narratives"] == [1, 2]


def test_failures_stops_bad_input_and_a_busy_dream_have_their_exit_codes(
    llm: LLMServer, imported: list[int], tmp_path: Path
) -> None:
    script_the_day(llm, imported)
    llm.script("not json", "still not json", step="dream_digest")

    code, out, err = run("dream", "--date", DAY)
    assert code == 1
    assert "not run: drift, dream; `tideline dream --date 2026-03-14` retries" in out
    assert "error: layer comb failed" in err

    code, _, err = run("dream", "--date", DAY, "--layers", "nap")
    assert code == 2 and "layers ['nap']: choose from" in err
    code, _, err = run("dream", "--date", "someday")
    assert code == 2 and "date" in err

    with opened() as app, RunLock(app.db, "dream", DreamBusy):
        code, _, err = run("dream", "--date", DAY)
    assert code == 5 and "dream" in err

    retried = run_json("dream", "--date", DAY)  # retried from the failed layer
    assert [r["status"] for r in retried["layers"]] == ["earlier"] * 3 + ["done"] * 3


def test_the_budget_stops_the_run_with_exit_one_and_the_record_says_so(
    llm: LLMServer, imported: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    script_the_day(llm, imported)
    monkeypatch.setenv("TIDELINE_DREAM_RUN_BUDGET", "400")

    code, out, err = run("dream", "--date", DAY)

    assert code == 1
    assert out.splitlines()[0].startswith(f"dream {DAY} stopped")
    assert "of a 400-token budget" in out and "budget" in err
    with opened() as app:
        record = app.dream.runs()[0]
    assert record.status == "stopped" and [r.status for r in record.records] == ["stopped"]


def test_threads_open_touch_close_by_hand(llm: LLMServer, imported: list[int]) -> None:
    script_the_day(llm, imported)
    assert run_json("dream", "--date", DAY, "--layers", "solidify")["status"] == "done"
    code, out, _ = run("threads")
    assert code == 1 and "no open threads" in out

    opened_one = run_json(
        "threads", "open", "--title", "Does Mia agree?", "--why", "not asked", "--memory", "2"
    )["thread"]
    tid = str(opened_one["id"])
    assert opened_one["status"] == "open" and opened_one["memories"] == [2]
    touched = run_json("threads", "touch", "--id", tid, "--note", "she does", "--memory", "1")
    assert touched["thread"]["notes"] == ["she does"] and touched["thread"]["memories"] == [1, 2]
    code, out, _ = run("threads")
    assert code == 0 and f"#{tid} [open] direction: Does Mia agree?" in out and "- she does" in out

    closed = run_json("threads", "close", "--id", tid, "--why", "settled")["thread"]
    assert closed["status"] == "resolved" and closed["closed_at"]
    assert run_json("threads", "--status", "resolved")["threads"][0]["id"] == int(tid)
    assert run_json("threads", "--status", "all")["threads"][0]["notes"] == ["she does", "settled"]

    for args, message in (
        (("threads", "open", "--title", "x"), "needs the memories that raised it"),
        (("threads", "open", "--title", "x", "--memory", "99"), "memories [99] do not exist"),
        (("threads", "close"), "needs the thread's id"),
        (("threads", "close", "--id", tid), f"thread {tid} is already resolved"),
        (("threads", "close", "--id", "77"), "thread 77 does not exist"),
        (("threads", "touch", "--id", tid, "--note", "x"), "already resolved"),
        (("threads", "list", "--title", "x"), "threads list takes no title"),
    ):
        code, _, err = run(*args)
        assert code in (1, 2) and message in err, (args, err)
