"""What an endpoint has taught this process: the structured-output rung it honours and its window.

Every sleep, dream and session summary builds its own client, so what one client learns is kept
here, per endpoint (base URL and model), for all of them: a server that lacks `json_schema` costs
one refused request per process, not one per run or call, and a context window read once (or
learnt from the error a too-long prompt got) sizes every later prompt.

The window: llama.cpp's `llama-server` tells it at `GET /props`, vLLM at `GET /v1/models`
(`max_model_len`); servers that do not tell (llama-cpp-python's, ollama) are learnt from their
context-overflow error ("Requested tokens (2210) exceed context window of 2048").
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from tideline.llm._messages import Mode

LADDER: tuple[Mode, ...] = ("json_schema", "json_object_schema", "json_object", "prompt")
# A refusal names the structured-output form it refused (llama-cpp-python answers json_schema
# with a 500 about the response format; others a 400/422).
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "json mode", "grammar")
_OVERFLOW = (
    re.compile(r"context (?:window|length|size)\D{0,40}?(\d{3,7})", re.IGNORECASE),
    re.compile(r"(\d{3,7})[- ]token context", re.IGNORECASE),
    re.compile(r"n_ctx\D{0,5}(\d{3,7})", re.IGNORECASE),
)
_OVERFLOW_WORDS = ("context window", "context length", "context size", "n_ctx", "too long")


@dataclass
class Endpoint:
    """One server and model: its rung on the ladder and its window (None: not known)."""

    mode: Mode = "json_schema"
    window: int | None = None
    probed: bool = False


class Endpoints:
    """Endpoint facts by (base URL, model); thread safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str], Endpoint] = {}

    def get(self, url: str, model: str) -> Endpoint:
        with self._lock:
            return self._known.setdefault((url, model), Endpoint())

    def step_down(self, url: str, model: str, refused: Mode) -> Mode | None:
        """The rung below `refused` (kept for every later client), or None at the bottom."""
        with self._lock:
            known = self._known.setdefault((url, model), Endpoint())
            if refused == "prompt" or refused not in LADDER:
                return None
            below = LADDER[LADDER.index(refused) + 1]
            if LADDER.index(known.mode) < LADDER.index(below):
                known.mode = below
            return known.mode


ENDPOINTS = Endpoints()


def names_format(status: int, message: str) -> bool:
    """A 400/422/500 about the response format: the server lacks that structured-output form."""
    text = message.lower()
    return status in (400, 422, 500) and any(w in text for w in _FORMAT_WORDS)


def overflow_window(message: str) -> int | None:
    """The context window a context-overflow error names (None: not such an error)."""
    text = message.lower()
    if not any(w in text for w in _OVERFLOW_WORDS):
        return None
    for pattern in _OVERFLOW:
        found = pattern.search(message)
        if found:
            return int(found.group(1))
    return 0  # an overflow that does not say the size


def window_of(models: Any, props: Any, model: str) -> int | None:
    """The context window from `GET /v1/models` (vLLM) or `GET /props` (llama.cpp)."""
    if isinstance(props, dict):
        settings = props.get("default_generation_settings")
        for where in (settings, props):
            if isinstance(where, dict) and _positive(where.get("n_ctx")):
                return int(where["n_ctx"])
    found = models.get("data") if isinstance(models, dict) else None
    data: list[Any] = found if isinstance(found, list) else []
    for entry in data:
        if not isinstance(entry, dict) or (entry.get("id") not in (model, None) and len(data) > 1):
            continue
        meta = entry.get("meta")
        places: tuple[dict[str, Any], ...] = (entry, meta if isinstance(meta, dict) else {})
        for key in ("max_model_len", "context_length", "context_window", "n_ctx"):
            for where in places:
                if _positive(where.get(key)):
                    return int(where[key])
    return None


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 10**8
