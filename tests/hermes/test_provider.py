"""The provider under Hermes's own `MemoryManager`: every hook of hermes-agent 0.19's
`MemoryProvider`, the blocks, kept turns, isolation, writes only from the primary agent, retries,
and a dead home that leaves the agent running."""

from __future__ import annotations

import datetime as dt
import inspect
import json
import logging
from pathlib import Path

import apsw
import pytest

from tests.hermes.conftest import NO_HERMES

pytest.importorskip("agent.memory_provider", reason=NO_HERMES)

from agent.memory_manager import build_memory_context_block
from agent.memory_provider import MemoryProvider

from tests.helpers import wait_until
from tests.hermes.conftest import Manager, rows, turns, write_config
from tideline.clock import ManualClock, system_clock
from tideline.hermes import TidelineProvider

HOOKS = (
    "system_prompt_block",
    "prefetch",
    "queue_prefetch",
    "sync_turn",
    "handle_tool_call",
    "shutdown",
    "on_turn_start",
    "on_session_end",
    "on_session_switch",
    "on_pre_compress",
    "on_memory_write",
    "on_delegation",
    "get_config_schema",
    "save_config",
    "backup_paths",
)
SAID = "My sister Anna moved to Lisbon in May, she teaches violin there."
REPLY = "Lisbon suits a violin teacher; I will remember that."


def test_it_implements_every_method_and_hook_of_hermes_abc() -> None:
    assert not inspect.isabstract(TidelineProvider)
    provider = TidelineProvider(clock=system_clock)
    assert isinstance(provider, MemoryProvider) and provider.name == "tideline"
    assert provider.is_available()
    missing = [h for h in HOOKS if getattr(TidelineProvider, h) is getattr(MemoryProvider, h)]
    assert not missing
    for hook in HOOKS:  # Hermes calls them by keyword: the signatures must take what it passes
        ours = inspect.signature(getattr(TidelineProvider, hook)).parameters
        theirs = inspect.signature(getattr(MemoryProvider, hook)).parameters
        assert set(theirs) <= set(ours) | {"kwargs"}, hook


def test_turns_are_kept_with_their_times_and_recalled_inside_hermes_fence(
    manager: Manager, hermes_home: Path
) -> None:
    mm, _ = manager()
    mm.on_turn_start(1, SAID)
    assert mm.prefetch_all(SAID) == ""  # nothing remembered yet: no empty block
    mm.sync_all(SAID, REPLY, session_id="s1")
    mm.flush_pending(5)
    home = hermes_home / "tideline" / "hermes"
    wait_until(lambda: len(turns(home)) == 2)
    assert turns(home) == [("s1", "user", SAID), ("s1", "assistant", REPLY)]
    said, replied = (str(r["ts"]) for r in rows(home))
    assert said <= replied  # the user's time is when the turn started

    recalled = mm.prefetch_all("Where does Anna live now?")
    assert "Lisbon" in recalled and "T1" in recalled
    assert "<tideline-memory" not in recalled and "<memory-data" not in recalled  # one fence
    fenced = build_memory_context_block(recalled)
    assert fenced.count("<memory-context>") == 1 and SAID in fenced


def test_a_replay_keeps_its_own_times_and_the_speakers_messages_name(
    manager: Manager, hermes_home: Path
) -> None:
    clock = ManualClock(dt.datetime(2023, 5, 8, 13, 56))
    mm, provider = manager(clock=clock, user_name="Caroline")
    mm.on_turn_start(1, SAID)
    clock.advance(minutes=1)
    named = [
        {"role": "user", "content": SAID},
        {"role": "assistant", "content": REPLY, "name": "Mel"},
    ]
    mm.sync_all(SAID, REPLY, session_id="s1", messages=named)
    wait_until(lambda: provider.kept == 2)
    kept = [(r["speaker"], r["ts"]) for r in rows(hermes_home / "tideline" / "hermes")]
    assert kept == [("Caroline", "2023-05-08T13:56:00Z"), ("Mel", "2023-05-08T13:57:00Z")]


def test_a_search_finds_raw_turns_by_default_and_errors_are_one_json_line(
    manager: Manager,
) -> None:
    mm, provider = manager()
    mm.sync_all(SAID, REPLY, session_id="s1")
    wait_until(lambda: provider.kept == 2)
    found = json.loads(mm.handle_tool_call("memory_search", {"query": "violin Lisbon"}))
    assert [h["type"] for h in found["hits"]][:1] == ["turn"] and SAID in found["hits"][0]["text"]
    bad = json.loads(mm.handle_tool_call("memory_search", {"query": "x", "limit": "ten"}))
    assert bad["error"].startswith("memory_search: argument 'k'") and "\n" not in bad["error"]
    unknown = json.loads(mm.handle_tool_call("memory_search", {"query": "x", "colour": 1}))
    assert unknown["error"].startswith("memory_search has no argument 'colour'")


def test_write_trace_profile_and_fact_tools_round_trip(manager: Manager) -> None:
    mm, provider = manager()
    mm.sync_all(SAID, REPLY, session_id="s1")
    wait_until(lambda: provider.kept == 2)
    written = json.loads(
        mm.handle_tool_call(
            "memory_write",
            {"gesture": "Anna, the user's sister, lives in Lisbon", "source_links": [1]},
        )
    )
    trace = json.loads(mm.handle_tool_call("memory_trace", {"narrative_id": written["id"]}))
    assert SAID in json.dumps(trace)
    profile = json.loads(mm.handle_tool_call("memory_profile", {"as_of": "2020-01-01"}))
    assert profile["facts"] == []
    missing = json.loads(mm.handle_tool_call("fact_reject", {"fact_id": 7, "why": "wrong"}))
    assert "next: call memory_profile with status='all'" in missing["error"]
    names = [s["name"] for s in mm.get_all_tool_schemas()]
    assert names == [
        "memory_search",
        "memory_trace",
        "memory_write",
        "memory_profile",
        "fact_reject",
        "fact_close",
        "memo_search",
        "memo_write",
    ]


def test_a_library_tool_writes_and_finds_a_note(manager: Manager, hermes_home: Path) -> None:
    library = hermes_home / "notes"
    (library / "people").mkdir(parents=True)
    (library / "people" / "_meta.yaml").write_text("description: people I know\n")
    write_config(hermes_home, memo_root=str(library))
    mm, _ = manager()
    wrote = json.loads(
        mm.handle_tool_call("memo_write", {"path": "people/anna.md", "text": "# Anna\nviolin"})
    )
    assert wrote.get("created") is True, wrote
    found = json.loads(mm.handle_tool_call("memo_search", {"query": "violin", "path": "*"}))
    assert found["hits"] and "anna.md" in json.dumps(found["hits"][0])


def test_one_users_memory_never_reaches_another(manager: Manager) -> None:
    mm_a, a = manager(user_id="telegram:1001")
    mm_b, b = manager(user_id="telegram:1002")
    mm_a.sync_all(SAID, REPLY, session_id="s1")
    wait_until(lambda: a.kept == 2)
    assert a.app is not None and b.app is not None and a.app.settings.home != b.app.settings.home
    assert "Lisbon" in mm_a.prefetch_all("Where does Anna live?")
    assert "Lisbon" not in mm_b.prefetch_all("Where does Anna live?")
    found = json.loads(mm_b.handle_tool_call("memory_search", {"query": "Anna Lisbon"}))
    assert found["hits"] == []


def test_only_the_primary_agent_writes(manager: Manager, hermes_home: Path) -> None:
    mm, _ = manager(agent_context="cron")
    mm.sync_all(SAID, REPLY, session_id="s1")
    mm.flush_pending(5)
    refused = json.loads(mm.handle_tool_call("memory_write", {"gesture": "x"}))
    assert "may only read it" in refused["error"]
    mm.on_memory_write("add", "user", "Anna lives in Lisbon")
    assert turns(hermes_home / "tideline" / "hermes") == []
    found = json.loads(mm.handle_tool_call("memory_search", {"query": "Anna"}))
    assert found["hits"] == []


def test_the_identity_block_is_t0_to_t3_without_a_second_soul(
    manager: Manager, hermes_home: Path
) -> None:
    (hermes_home / "SOUL.md").write_text("I am Quill, a careful research assistant.\n")
    mm, provider = manager()
    assert "Tideline memory" in mm.build_system_prompt()  # nothing remembered yet
    assert provider.app is not None
    provider.app.memory.write(gesture="I keep promises about deadlines", kind="reflection")
    block = mm.build_system_prompt()
    assert "## T0 · identity anchor" in block and "keep promises about deadlines" in block
    assert "Quill" not in block  # Hermes shows its SOUL.md itself


def test_built_in_memory_writes_are_mirrored(manager: Manager) -> None:
    mm, provider = manager()
    mm.on_memory_write("add", "user", "Prefers answers in bullet points")
    assert provider.app is not None
    app = provider.app
    hits = wait_until(lambda: app.memory.search("bullet points").hits)
    assert hits[0].text == "Prefers answers in bullet points"


def test_a_warmed_prefetch_is_served_for_its_message_until_a_turn_is_kept(
    manager: Manager,
) -> None:
    mm, provider = manager()
    mm.sync_all(SAID, REPLY, session_id="s1")
    mm.queue_prefetch_all("Where does Anna live?", session_id="s1")
    wait_until(lambda: provider.warm)
    warmed = provider.warm[("s1", "Where does Anna live?")][1]
    assert "Lisbon" in warmed and mm.prefetch_all("Where does Anna live?") == warmed
    assert not provider.warm  # served once


def test_kept_turns_are_counted_on_the_worker_not_in_the_next_prefetch(
    manager: Manager,
) -> None:
    """The tokenizer costs ~1.5 µs a character: the worker counts a turn as it keeps it, so the
    prefetch that shows the turn fits it to its budget without a tokenizer call of its own."""
    mm, provider = manager()
    mm.sync_all(SAID, REPLY, session_id="s1")
    wait_until(lambda: provider.kept == 2)
    assert provider.app is not None
    counted = set(provider.app.provider.count._seen)  # before the prefetch
    block = provider.app.provider.prefetch_block("Where does Anna live?", "s1")
    shown = [i for s in block.sections for i in s.items if i.ref.startswith("t:")]
    assert shown and all(i.render() + "\n" in counted for i in shown)


def test_session_switch_rotates_the_session_key(manager: Manager, hermes_home: Path) -> None:
    mm, provider = manager()
    mm.on_session_switch("s2", parent_session_id="s1", reset=True)
    mm.sync_all(SAID, REPLY, session_id="")
    wait_until(lambda: provider.kept == 2)
    assert {s for s, _, _ in turns(hermes_home / "tideline" / "hermes")} == {"s2"}
    assert "word for word" in mm.on_pre_compress([{"role": "user", "content": SAID}])


def test_a_locked_database_delays_a_turn_never_loses_it(
    manager: Manager, hermes_home: Path
) -> None:
    mm, provider = manager(drain_seconds=0.3)
    assert provider.app is not None
    db = provider.app.settings.db_path
    other = apsw.Connection(str(db))
    other.execute("BEGIN IMMEDIATE")  # another writer holds the database
    mm.sync_all(SAID, REPLY, session_id="s1")
    wait_until(lambda: provider.worker is not None and provider.worker.failures >= 1)
    mm.shutdown_all()  # still locked: the turns are spooled, not dropped
    other.execute("ROLLBACK")
    other.close()
    _, again = manager()
    wait_until(lambda: again.kept == 2)
    assert turns(hermes_home / "tideline" / "hermes") == [
        ("s1", "user", SAID),
        ("s1", "assistant", REPLY),
    ]


def test_a_dead_home_leaves_empty_blocks_and_a_warning(
    manager: Manager, hermes_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = hermes_home / "not-a-folder"
    blocked.write_text("a file where the home should be")
    write_config(hermes_home, home=str(blocked / "home"))
    with caplog.at_level(logging.WARNING, logger="tideline.hermes"):
        mm, _ = manager()
    assert "Tideline memory is off for this session" in caplog.text
    assert mm.build_system_prompt() == "" and mm.prefetch_all("Where does Anna live?") == ""
    mm.sync_all(SAID, REPLY, session_id="s1")
    assert "error" in json.loads(mm.handle_tool_call("memory_search", {"query": "Anna"}))


def test_the_session_end_starts_the_sleep_off_the_agent_thread(
    manager: Manager, hermes_home: Path
) -> None:
    mm, _ = manager()
    mm.sync_all(SAID, REPLY, session_id="s1")
    mm.on_session_end([])
    home = hermes_home / "tideline" / "hermes"
    log = home / "sleep.log"
    wait_until(lambda: log.is_file() and "sleep skipped in" in log.read_text(), 60, 0.1)
    text = log.read_text()
    assert "the Hermes session ended: sleep on exit" in text
    assert "sessions 1" in text  # it ran after the session's turns were kept
    assert "no LLM configured" in text  # this home has none: the rule steps ran


def test_backup_paths_name_a_home_outside_hermes_home_only(
    hermes_home: Path, tmp_path: Path
) -> None:
    assert (
        TidelineProvider(clock=system_clock).backup_paths() == []
    )  # inside $HERMES_HOME: Hermes backs it up
    write_config(hermes_home, home=str(tmp_path / "elsewhere"))
    assert TidelineProvider(clock=system_clock).backup_paths() == [
        str((tmp_path / "elsewhere").resolve())
    ]


def test_setup_saves_tideline_settings_in_config_yaml(hermes_home: Path) -> None:
    provider = TidelineProvider(clock=system_clock)
    keys = [f["key"] for f in provider.get_config_schema()]
    assert "llm_base_url" in keys and "sleep_on_exit" in keys
    provider.save_config({"llm_model": "qwen"}, str(hermes_home))
    saved = (hermes_home / "config.yaml").read_text()
    assert "provider: tideline" in saved and "llm_model: qwen" in saved and "embedder" in saved
