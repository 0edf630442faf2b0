"""A filtered vector search returns `k` records when `k` pass the filter, on both engines.

On PostgreSQL the HNSW graph is walked first and the filter applied to what it found (pgvector
0.6 has no iterative scan): a narrow filter whose rows lie far from the query used to come back
short — with no rows at all here. Planted: one session of 300 turns pointing away from the
query, among 3,000 pointing towards it (a share of the rows at which the planner picks the HNSW
scan); the session's filter must still give its 10 nearest, in order.
"""

from __future__ import annotations

import numpy as np
import pytest

from tideline.clock import system_clock
from tideline.memory import AGENT_MIGRATIONS, NewTurn, RawContext
from tideline.store import Storage

pytestmark = pytest.mark.engines

DIM = 32


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def test_a_narrow_filter_over_a_planted_set_returns_k_nearest(storage: Storage) -> None:
    AGENT_MIGRATIONS.apply(storage)
    raw = RawContext(storage, clock=system_clock)
    rng = np.random.default_rng(16)
    q = _unit(rng.standard_normal(DIM))
    crowd: list[int] = []
    for s in range(30):
        done, _, _ = raw.add_turns(
            f"crowd-{s}", [NewTurn("user", f"crowd {s} turn {i}") for i in range(100)]
        )
        crowd += [i for i, _ in done]
    done, _, sid = raw.add_turns("far", [NewTurn("user", f"far turn {i}") for i in range(300)])
    planted = [i for i, _ in done]
    raw.index.bind_vectors("planted", DIM)
    near = _unit(q + 0.3 * rng.standard_normal((len(crowd), DIM)))
    raw.index.set_vectors(zip(crowd, near, strict=True))
    far = _unit(-q + 0.5 * rng.standard_normal((len(planted), DIM)))
    raw.index.set_vectors(zip(planted, far, strict=True))
    if storage.dialect == "postgresql":
        storage.execute("ANALYZE")  # fresh statistics, as autovacuum keeps them

    where, params = raw.session_filter(sid, exclude=[planted[0]])
    hits = raw.index.vector(q, 10, where, params)

    wanted = sorted(planted[1:], key=lambda i: -float(far[planted.index(i)] @ q))[:10]
    assert [h.id for h in hits] == wanted
    unfiltered = raw.index.vector(q, 10)
    assert len(unfiltered) == 10 and not {h.id for h in unfiltered} & set(planted)
