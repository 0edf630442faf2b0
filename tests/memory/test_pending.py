"""Vectors left missing by a kill or a `none` run are filled by the next write or import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tideline.app import Tideline
from tideline.config import Settings
from tideline.embed import Embedder
from tideline.upkeep import run_doctor


def _chat(path: Path, turns: int) -> Path:
    lines = [
        json.dumps({"role": "user" if n % 2 else "assistant", "content": f"turn {n} about tides"})
        for n in range(turns)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "OMP_NUM_THREADS": "1", **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_kill_after_the_commit_is_repaired_by_the_next_import(
    tmp_path: Path, settings: Settings, e5: Embedder
) -> None:
    chat = _chat(tmp_path / "chat.jsonl", 150)
    # A real process imports with e5 and is SIGKILLed after its first batch of vectors.
    child = _run(
        f"""
        import os, signal
        from tideline.app import Tideline
        from tideline.config import Settings
        app = Tideline(Settings.load())
        app.memory.import_file({str(chat)!r}, "openai",
                               progress=lambda done, total: os.kill(os.getpid(), signal.SIGKILL))
        """
    )
    assert child.returncode == -9, child.stderr
    app = Tideline(settings, embedder=e5)
    try:
        stats = app.memory.stats()
        assert stats["turns"] == 150 and 0 < stats["turn_vectors"] < 150
        assert stats["vectors_pending"] == 150 - stats["turn_vectors"]
        summary = app.memory.import_file(chat, "openai")  # nothing new in the file...
        assert summary.turns_added == 0
        stats = app.memory.stats()  # ...but what the kill left behind is embedded now
        assert stats["turn_vectors"] == 150 and stats["vectors_pending"] == 0
    finally:
        app.close()


def test_rows_written_without_an_embedder_get_vectors_on_the_next_write(
    tmp_path: Path, settings: Settings, e5: Embedder
) -> None:
    chat = _chat(tmp_path / "chat.jsonl", 6)
    cli = [sys.executable, "-m", "tideline"]
    env = {**os.environ, "TIDELINE_EMBEDDER": "none", "OMP_NUM_THREADS": "1"}
    for args in (["import", str(chat), "-f", "openai"], ["write", "The tide turned at noon"]):
        subprocess.run([*cli, *args], env=env, check=True, capture_output=True, timeout=120)
    app = Tideline(settings, embedder=e5)
    try:
        assert app.memory.stats()["vectors_pending"] == 7  # 6 turns + 1 narrative
        assert run_doctor(settings).facts["vectors_pending"] == 7
        app.memory.write(gesture="The harbour wall was repaired")
        assert app.memory.stats()["narrative_vectors"] == 2
        app.memory.sync_turn("s", "user", "the boats came back")
        stats = app.memory.stats()
        assert stats["turn_vectors"] == 7 and stats["vectors_pending"] == 0
        hits = app.memory.search("tide turned", mode="vec", include_turns=False).hits
        assert hits and hits[0].text == "The tide turned at noon"
    finally:
        app.close()
