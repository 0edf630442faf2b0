"""Any OpenAI-compatible `/v1/embeddings` endpoint (ollama, TEI, vLLM, llama.cpp, hosted APIs).

Batches requests and sends them through `tideline.http.JsonApi`, the one client of the model
servers' APIs, so its policy is the LLM client's: connection errors, 429, 5xx and bodies cut
short are retried `retries` times (Retry-After honoured, backoff doubling, each wait capped at
`BACKOFF_MAX`: a search is waiting), a timeout fails at once, and an answer is read at most to a
size its batch could honestly need. `EmbedderUnavailable` says in one line what went wrong.
Every input is cut to `max_input_tokens` (estimated tokens; 512 by default, the limit of the small
local models), a query to at most 256 as for e5 (`fit_query`), so an endpoint is never sent a text
it would reject or spend seconds on.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tideline.embed._embedder import estimate_tokens, normalise
from tideline.embed._fit import fit_prefix, fit_query
from tideline.errors import ConfigError, EmbedderUnavailable
from tideline.http import JsonApi, Retries, Unanswered

BACKOFF_MAX = 5.0  # seconds: the most one retry waits, whatever the server's Retry-After says
# An answer's bound: JSON floats take up to ~20 bytes, so 128 KiB a text holds 6,000 dimensions.
BODY_BASE, BODY_PER_TEXT = 1024 * 1024, 128 * 1024


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
        self.model = model
        self.model_id = f"openai:{model}"
        self.batch = max(1, batch)
        self.max_input_tokens = max(16, max_input_tokens)
        self.timeout = timeout
        self._api = JsonApi(
            base_url,
            api_key,
            timeout=timeout,
            retries=Retries(retries, backoff, BACKOFF_MAX),
            max_body=BODY_BASE + self.batch * BODY_PER_TEXT,
        )
        self.url = self._api.url + "/embeddings"
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
        got = self._api.post("/embeddings", {"model": self.model, "input": batch})
        if isinstance(got, Unanswered):
            raise EmbedderUnavailable(self._unanswered(got))
        if not got.ok:
            raise EmbedderUnavailable(
                f"embeddings endpoint {self.url} refused the request (HTTP {got.status}: "
                f"{got.detail()}); check TIDELINE_EMBED_MODEL and TIDELINE_EMBED_API_KEY"
            )
        try:
            data = sorted(got.data["data"], key=lambda d: d["index"])
            return normalise(np.array([d["embedding"] for d in data], dtype=np.float32))
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderUnavailable(
                f"embeddings endpoint {self.url} answered with an unexpected body ({exc}); "
                "is it OpenAI-compatible?"
            ) from exc

    def _unanswered(self, got: Unanswered) -> str:
        if got.why == "timeout":
            return (
                f"embeddings endpoint {self.url} did not answer within {self.timeout:g}s; "
                "raise TIDELINE_EMBED_TIMEOUT or start it on faster hardware"
            )
        if got.why == "too_large":
            return (
                f"embeddings endpoint {self.url} answered with a body over "
                f"{self._api.max_body:,} bytes, which was not read further; lower "
                "TIDELINE_EMBED_BATCH or check that it is an embeddings API"
            )
        return (
            f"embeddings endpoint {self.url} is unreachable after {got.tries} tries ({got.last}); "
            "start it or set TIDELINE_EMBEDDER=none"
        )
