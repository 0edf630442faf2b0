"""Tideline against a real model server (llama-cpp-python + SmolLM2-135M, n_ctx 2048): the real
protocol, token counts, limits and timing. What a 135M model says is not judged; that every
answer is either used or refused in one clean line is.

Each test names its own model (the server serves its one model under any name), so what one
test's client learns about the endpoint does not leak into another's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from tests.helpers import shared_data
from tests.llama_server import N_CTX, ModelServer
from tideline.app import Tideline
from tideline.config import Settings
from tideline.errors import InputTooLong, LLMError, LLMUnavailable
from tideline.llm import OpenAIChat, TokenMeter

pytestmark = pytest.mark.timeout(1800)  # a 135M model on 2 shared cores: minutes, not seconds
ROOT = Path(__file__).parents[2]
ASK = [
    {"role": "system", "content": "You list facts about the user as JSON."},
    {"role": "user", "content": "I live in Tokyo and I work as a nurse."},
]


class Fact(BaseModel):
    value: str = Field(min_length=1, max_length=200)


class Facts(BaseModel):
    facts: list[Fact] = Field(default_factory=list, max_length=5)


def settings(server: ModelServer, model: str, **overrides: object) -> Settings:
    values = {"llm_base_url": server.url, "llm_model": model, "llm_timeout": 300.0,
              "llm_backoff": 0.1, "llm_backoff_max": 1.0, "embedder": "none", **overrides}  # fmt: skip
    return Settings.load(overrides=values)


def client(server: ModelServer, model: str, **overrides: object):  # type: ignore[no-untyped-def]
    llm = Tideline(settings(server, model, **overrides)).llm
    assert llm is not None
    return llm


def test_the_ladder_learns_the_servers_500_and_gets_schema_valid_json(
    model_server: ModelServer,
) -> None:
    llm, meter = client(model_server, "ladder"), TokenMeter()
    result = llm.complete(ASK, schema=Facts, step="extract", max_tokens=120, meter=meter)
    assert result.mode == "json_object_schema" and isinstance(result.data, Facts)
    assert not result.usage.estimated and result.usage.prompt_tokens > 20  # the server's counts
    # the refused request cost nothing; a 135M model may need the one repair
    assert meter.calls == result.attempts and meter.total == result.usage
    later = client(model_server, "ladder")  # the next run in this process
    assert isinstance(later.backend, OpenAIChat) and later.backend.mode == "json_object_schema"


def test_a_prompt_over_the_window_is_one_line_and_teaches_the_window(
    model_server: ModelServer,
) -> None:
    llm = client(model_server, "window")
    assert llm.limits() == (24000, 2000)  # llama-cpp-python does not say its window
    with pytest.raises(InputTooLong) as err:
        llm.complete([{"role": "user", "content": "word " * 3000}], step="extract")
    message = str(err.value)
    assert "\n" not in message and f"its {N_CTX}-token context window" in message
    assert model_server.url in message and "--n_ctx" in message
    assert llm.limits() == (int(N_CTX * 0.85) - N_CTX // 4, N_CTX // 4)


def test_an_answer_cut_at_max_tokens_is_repaired_or_refused_in_one_line(
    model_server: ModelServer,
) -> None:
    llm = client(model_server, "short", llm_structured="json_object")  # schema in the prompt
    try:
        result = llm.complete(ASK, schema=Facts, step="extract", max_tokens=4)
        assert isinstance(result.data, Facts)  # a tiny answer can still be valid JSON
    except LLMError as exc:
        assert "\n" not in str(exc) and "stopped at max_tokens=4" in str(exc)


def test_a_timeout_is_one_clean_line(model_server: ModelServer) -> None:
    llm = client(model_server, "slow", llm_timeout=0.05)
    start = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"within 0.05s; raise TIDELINE_LLM_TIMEOUT"):
        llm.complete([{"role": "user", "content": "word " * 1500}], step="extract")
    assert time.monotonic() - start < 10


def test_the_cli_imports_a_chat_and_sleeps_on_it(model_server: ModelServer, tmp_path: Path) -> None:
    env = {**os.environ, "TIDELINE_HOME": str(tmp_path / "home"), "TIDELINE_EMBEDDER": "none",
           "TIDELINE_LLM_BASE_URL": model_server.url, "TIDELINE_LLM_MODEL": "cli",
           "TIDELINE_LLM_TIMEOUT": "300"}  # fmt: skip
    cli = [sys.executable, "-m", "tideline"]
    chat = str(ROOT / "examples" / "chat.json")
    subprocess.run([*cli, "import", chat, "--format", "openai"], env=env, check=True)
    done = subprocess.run([*cli, "sleep", "--json"], env=env, capture_output=True, text=True)
    report = json.loads(done.stdout)
    assert report["tokens"]["calls"] >= 1 and not report["tokens"]["estimated"]
    if report["status"] == "done":  # the grammar makes the answers schema-valid: the usual case
        assert done.returncode == 0
        assert next(s for s in report["steps"] if s["name"] == "extract")["status"] == "done"
    else:  # a 135M model may still break a limit twice: a clean failure, exit 1, one line
        assert (report["status"], done.returncode) == ("failed", 1), done.stderr
        assert all("\n" not in e for e in report["errors"]) and "Traceback" not in done.stderr


def test_a_sleep_over_two_locomo_sessions_completes_or_fails_cleanly(
    model_server: ModelServer, tmp_path: Path
) -> None:
    conv = json.loads(sorted(shared_data("locomo").glob("*.json"))[0].read_text())
    two = {k: conv[k] for k in ("speaker_a", "speaker_b")}
    for n in (1, 2):
        two |= {f"session_{n}": conv[f"session_{n}"]}
        two |= {f"session_{n}_date_time": conv[f"session_{n}_date_time"]}
    (tmp_path / "conv.json").write_text(json.dumps(two))
    app = Tideline(settings(model_server, "locomo", home=str(tmp_path / "home")))
    try:
        app.memory.import_file(tmp_path / "conv.json", "locomo")
        report = app.sleep.run()
        run = app.profile.runs()[0]
        assert report.status in ("done", "failed") and run.status == report.status
        assert run.tokens_in > 0 and run.tokens_in == report.tokens["prompt_tokens"]
        if report.status == "done":
            assert len(app.profile.read().processed) == 2
        else:  # a 135M model may fail a step twice: one line naming it, nothing applied
            assert all("\n" not in e and "step" in e for e in report.errors), report.errors
            assert "Traceback" not in " ".join(report.errors)
            assert app.profile.read().processed == {}
    finally:
        app.close()
