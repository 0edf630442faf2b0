"""Any OpenAI-compatible `/v1/embeddings` endpoint (ollama, TEI, vLLM, llama.cpp, hosted APIs).

Batches requests, times out, retries transient failures (connection errors, 429, 5xx) with
exponential backoff, and raises `EmbedderUnavailable` with one line when the endpoint stays down.
Every input is cut to `max_input_tokens` (estimated tokens; 512 by default, the limit of the small
local models), a query to at most 256 as for e5 (`fit_query`), so an endpoint is never sent a text
it would reject or spend seconds on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import httpx
import numpy as np

from tideline.embed._fit import fit_prefix, fit_query
from tideline.embed._protocol import estimate_tokens, normalise
from tideline.errors import ConfigError, EmbedderUnavailable


class OpenAIEmbedder:
    """Documents and queries are sent alike; the endpoint's model decides how to embed them."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        batch: int = 32,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.5,
        dim: int | None = None,
        max_input_tokens: int = 512,
    ):
        if not base_url or not model:
            raise ConfigError(
                "the openai embedder needs TIDELINE_EMBED_URL (e.g. http://127.0.0.1:11434/v1) "
                "and TIDELINE_EMBED_MODEL"
            )
        self.url = base_url.rstrip("/") + "/embeddings"
        self.model = model
        self.model_id = f"openai:{model}"
        self.batch = max(1, batch)
        self.max_input_tokens = max(16, max_input_tokens)
        self.retries = max(0, retries)
        self.backoff = backoff
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)
        self._dim = dim  # None: learned from the first answer (or a probe request)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._post(["dimension probe"]).shape[1])
        return self._dim

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        texts = [fit_prefix(t, self.max_input_tokens, self.count_tokens) for t in texts]
        parts = [self._post(texts[i : i + self.batch]) for i in range(0, len(texts), self.batch)]
        out = np.vstack(parts)
        self._dim = out.shape[1]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        head = fit_query(text, self.max_input_tokens, self.count_tokens)
        vector: np.ndarray = self.embed_documents([head])[0]
        return vector

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def _post(self, batch: list[str]) -> np.ndarray:
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                resp = self._client.post(self.url, json={"model": self.model, "input": batch})
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if resp.status_code == 429 or resp.status_code >= 500:
                last = f"HTTP {resp.status_code}"
                continue
            if resp.status_code >= 400:
                raise EmbedderUnavailable(
                    f"embeddings endpoint {self.url} refused the request (HTTP {resp.status_code}: "
                    f"{resp.text[:200]}); check TIDELINE_EMBED_MODEL and TIDELINE_EMBED_API_KEY"
                )
            try:
                data = sorted(resp.json()["data"], key=lambda d: d["index"])
                return normalise(np.array([d["embedding"] for d in data], dtype=np.float32))
            except (ValueError, KeyError, TypeError) as exc:
                raise EmbedderUnavailable(
                    f"embeddings endpoint {self.url} answered with an unexpected body ({exc}); "
                    "is it OpenAI-compatible?"
                ) from exc
        raise EmbedderUnavailable(
            f"embeddings endpoint {self.url} is unreachable after {self.retries + 1} tries ({last}); "
            "start it or set TIDELINE_EMBEDDER=none"
        )
