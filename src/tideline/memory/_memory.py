"""`Memory`: the one service API over raw context and narratives that every driver calls.

Writes are transactional: a turn, a narrative with its tags and links, or a whole imported file
is stored completely or not at all. Embedding happens after the rows are committed, so an embedder
that is down never loses a write: search meanwhile degrades to lexical with a warning, and the
vectors are filled in later. A process killed between the commit and the embedding leaves records
without vectors too, so every call that embeds first fills what is pending: an import fills all of
it, `sync_turn` and `write` up to `PENDING_PER_CALL` older records besides their own (a request
stays short); `embed_pending` (`tideline embed`) fills everything; `stats` counts what is left.

One `Memory` may serve several threads (the MCP server runs tools in worker threads) over one
connection. `lock` serialises the database work; embedding — the slow part, up to a second per
512-token window here — runs outside it, so one client's long text never stalls another's call.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tideline.embed import Embedder
from tideline.errors import EmbedderError, InvalidInput, NotFound
from tideline.memory._narratives import NarrativeInput, Narratives
from tideline.memory._raw import NewTurn, RawContext
from tideline.memory._time import parse_time
from tideline.memory._types import (
    ImportSummary,
    MemoryHit,
    Narrative,
    SearchResult,
    Trace,
    Turn,
    TurnResult,
)
from tideline.memory.importers import get_importer
from tideline.search import MODES, Hit, bound_query, query_vector
from tideline.store import Database

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class TurnFusion:
    """How raw-turn search fuses its lexical and vector lists (reciprocal rank, weighted).

    Tuned on LoCoMo (docs/benchmarks.md): with k=10 the top of each list counts more than with
    the usual 60, which suits short turns where the first few hits carry the evidence; both lists
    weigh the same since turns are embedded with their speaker's name (see `_raw.index_text`).
    """

    k: int = 10
    vector_weight: float = 1.0


MAX_K = 200
EMBED_BATCH = 64
PENDING_PER_CALL = 64

#: What owns an index and can list its records still without a vector (raw turns, narratives).
Owner = RawContext | Narratives


class Memory:
    """Raw context + narratives of one agent, with hybrid search and source-link tracing."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder | None,
        *,
        keyword_boost: float = 0.3,
        turn_fusion: TurnFusion | None = None,
        lock: AbstractContextManager[object] | None = None,
    ):
        self.db = db
        self.lock = lock or threading.RLock()
        self.embedder = embedder
        self.keyword_boost = keyword_boost
        self.turn_fusion = turn_fusion or TurnFusion()
        self.raw = RawContext(db)
        self.narratives = Narratives(db)
        self.warnings: list[str] = []
        self._vectors_ready = False

    # -- embedding ---------------------------------------------------------------------------
    def _bind(self) -> bool:
        """Make the vector tables match the embedder; False when there are no vectors to make."""
        if self._vectors_ready:
            return True
        if self.embedder is None or not self.db.vec_enabled:
            return False
        try:
            dim = self.embedder.dim
        except EmbedderError as exc:
            self.warnings.append(str(exc))
            return False
        if dim == 0:
            return False
        with self.lock:
            for index in (self.raw.index, self.narratives.index):
                index.bind_vectors(self.embedder.model_id, dim)
        self._vectors_ready = True
        return True

    def _fill(
        self,
        owner: Owner,
        new: Sequence[tuple[int, str]] = (),
        budget: int | None = None,
        progress: Progress | None = None,
    ) -> int:
        """Embed `new` records and, before them, up to `budget` (None: all) older records still
        without a vector. Only the reads and writes hold the lock."""
        if not self._bind():
            return 0
        assert self.embedder is not None
        fresh = {i for i, _ in new}
        with self.lock:
            older = owner.unembedded(limit=len(fresh) + (budget if budget is not None else 10**9))
        items = [r for r in older if r[0] not in fresh][:budget] + list(new)
        if not items:
            return 0
        result = owner.index.fill(
            self.embedder, items, progress=progress, batch=EMBED_BATCH, guard=self.lock
        )
        if result.error:
            warning = (
                f"{result.total - result.done} texts not embedded yet ({result.error}); "
                "they are embedded on the next write, or run `tideline embed`"
            )
            log.warning(warning)
            self.warnings.append(warning)
        return result.done

    def embed_pending(self, progress: Progress | None = None) -> int:
        """Embed every turn and narrative that has no vector yet (after an outage, a kill or a
        model change)."""
        return self._fill(self.narratives) + self._fill(self.raw, progress=progress)

    def pending_vectors(self) -> int:
        """Turns and narratives the configured embedder has not embedded yet."""
        if self.embedder is None or self.embedder.model_id == "none" or not self.db.vec_enabled:
            return 0
        total = 0
        with self.lock:
            for table, index in (("turns", self.raw.index), ("narratives", self.narratives.index)):
                bound = index.model_id == self.embedder.model_id
                where = index.pending_filter() if bound else "1"
                total += int(self.db.scalar(f"SELECT count(*) FROM {table} WHERE {where}"))
        return total

    # -- raw context -------------------------------------------------------------------------
    def sync_turn(
        self,
        session: str,
        role: str,
        text: str,
        speaker: str | None = None,
        timestamp: str | None = None,
        external_id: str | None = None,
    ) -> TurnResult:
        """Append one turn; the same turn sent twice is stored once."""
        with self.lock:
            results, new = self.raw.add_turns(
                session, [NewTurn(role, text, speaker, timestamp, external_id)]
            )
            tid, created = results[0]
            sid = int(self.db.scalar("SELECT session_id FROM turns WHERE id = ?", (tid,)))
        self._fill(self.raw, new, PENDING_PER_CALL)
        return TurnResult(tid, sid, created)

    def import_file(
        self,
        path: str | Path,
        fmt: str,
        progress: Progress | None = None,
        session: str | None = None,
    ) -> ImportSummary:
        """Import a conversation file whole (one transaction), then embed the new turns."""
        path = Path(path)
        importer = get_importer(fmt)
        if not path.is_file():
            raise NotFound(f"{path} is not a file; pass the path of a {fmt} export")
        batch = importer.read(path)
        summary = ImportSummary(str(path), fmt, skipped=batch.skipped, problems=batch.problems)
        with self.lock, self.db.transaction():
            for s in batch.sessions:
                if not s.turns:
                    continue
                results, added = self.raw.add_turns(
                    session or s.key, s.turns, source=fmt, title=s.title
                )
                summary.sessions += 1
                summary.turns_added += len(added)
                summary.turns_existing += len(results) - len(added)
        self.embed_pending(progress)  # the new turns and whatever an earlier run left behind
        summary.warnings = list(self.warnings)
        return summary

    # -- narratives --------------------------------------------------------------------------
    def write(self, **fields: Any) -> Narrative:
        """Validate and store a narrative (see `NarrativeInput` for fields and limits)."""
        data = NarrativeInput.from_mapping(fields).validated()
        with self.lock:
            with self.db.transaction():
                self.raw.require(data.source_links)
                nid = self.narratives.insert(data)
            narrative = self.narratives.require(nid)
            new = self.narratives.text_rows([nid])
        self._fill(self.narratives, new, PENDING_PER_CALL)
        return narrative

    def trace(self, narrative_id: int, window: int = 2) -> Trace:
        """A narrative's source turns, each with `window` neighbouring turns: the texture behind it."""
        if not 0 <= window <= 50:
            raise InvalidInput(f"window={window}: use 0–50 neighbouring turns")
        with self.lock:
            narrative = self.narratives.require(int(narrative_id))
            return Trace(narrative, self.raw.windows(narrative.source_links, window))

    # -- search ------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        since: str | None = None,
        until: str | None = None,
        min_weight: float | None = None,
        tags: Sequence[str] | None = None,
        kind: str | None = None,
        include_turns: bool = False,
        mode: str = "hybrid",
    ) -> SearchResult:
        """Hybrid search over narratives (keyword boost) and optionally raw turns."""
        k = _check_k(k)
        if mode not in MODES:
            raise InvalidInput(f"mode={mode!r}; use one of {list(MODES)}")
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is empty; pass the words or question to search for")
        since_t, until_t = parse_time(since, "since"), parse_time(until, "until", end_of_day=True)
        query, cut = bound_query(query)
        warnings: list[str] = [cut] if cut else []
        qvec = None
        if mode != "lex":
            qvec, warning = query_vector(self.embedder if self._bind() else None, query)
            if warning:
                warnings.append(warning)
            elif qvec is None and mode == "vec":
                warnings.append(
                    "no embedder configured; vector search is unavailable, showing lexical results"
                )
        effective = mode if qvec is not None else "lex"
        with self.lock:
            hits = self._narrative_hits(
                query, qvec, k, effective, since_t, until_t, min_weight, tags, kind
            )
            if include_turns:
                turns = self._turn_hits(query, qvec, k, effective, since_t, until_t)
                hits = _interleave(hits, turns)
        return SearchResult(hits[:k], warnings)

    def search_turns(
        self, query: str, k: int = 10, mode: str = "hybrid", fusion: str = "rrf"
    ) -> list[MemoryHit]:
        """Raw-turn retrieval on its own (used by the LoCoMo benchmark)."""
        query = bound_query(query)[0]
        qvec = (
            None
            if mode == "lex"
            else query_vector(self.embedder if self._bind() else None, query)[0]
        )
        with self.lock:
            return self._turn_hits(
                query, qvec, _check_k(k), mode if qvec is not None else "lex", None, None, fusion
            )

    def _fusion(self, mode: str) -> str:
        return "weighted" if mode == "hybrid" else "rrf"

    def _narrative_hits(
        self,
        query: str,
        qvec: Any,
        k: int,
        mode: str,
        since: str | None,
        until: str | None,
        min_weight: float | None,
        tags: Sequence[str] | None,
        kind: str | None,
    ) -> list[MemoryHit]:
        conds, params = _time_range("created_at", since, until)
        if min_weight is not None:
            conds.append("weight >= ?")
            params.append(float(min_weight))
        if kind:
            conds.append("kind = ?")
            params.append(kind)
        if tags:
            wanted = [t.strip().casefold() for t in tags if t.strip()]
            conds.append(
                f"id IN (SELECT narrative_id FROM narrative_tags WHERE tag IN ({','.join('?' * len(wanted))}))"
            )
            params += wanted
        where = _rowid_filter("narratives", conds)
        found = self.narratives.index.search(
            query,
            qvec,
            k,
            mode,
            fusion=self._fusion(mode),
            texts=self.narratives.texts,
            boost=self.keyword_boost,
            where=where,
            params=params,  # type: ignore[arg-type]
        )
        by_id = {n.id: n for n in self.narratives.get([h.id for h in found])}
        return [
            _hit(
                "narrative",
                h,
                text=by_id[h.id].gesture,
                created_at=by_id[h.id].created_at,
                weight=by_id[h.id].weight,
                tags=by_id[h.id].tags,
            )
            for h in found
            if h.id in by_id
        ]

    def _turn_hits(
        self,
        query: str,
        qvec: Any,
        k: int,
        mode: str,
        since: str | None,
        until: str | None,
        fusion: str = "rrf",
    ) -> list[MemoryHit]:
        conds, params = _time_range("ts", since, until)
        where = _rowid_filter("turns", conds)
        found = self.raw.index.search(
            query,
            qvec,
            k,
            mode,
            fusion=fusion,
            boost=self.keyword_boost,  # type: ignore[arg-type]
            where=where,
            params=params,
            texts=self.raw.texts,
            rrf_k=self.turn_fusion.k,
            weights=(1.0, self.turn_fusion.vector_weight),
        )
        by_id = {t.id: t for t in self.raw.get([h.id for h in found])}
        return [
            _hit(
                "turn",
                h,
                text=by_id[h.id].text,
                created_at=by_id[h.id].ts,
                session=by_id[h.id].session,
                speaker=by_id[h.id].speaker,
            )
            for h in found
            if h.id in by_id
        ]

    # -- overview ----------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        pending = self.pending_vectors()
        with self.lock:
            return self._stats(pending)

    def _stats(self, pending: int) -> dict[str, Any]:
        kinds = dict(
            self.db.execute("SELECT kind, count(*) FROM narratives GROUP BY kind").fetchall()
        )
        return {
            "sessions": self.db.scalar("SELECT count(*) FROM sessions"),
            "turns": self.db.scalar("SELECT count(*) FROM turns"),
            "narratives": sum(kinds.values()),
            "narratives_by_kind": kinds,
            "mean_weight": self.db.scalar("SELECT round(avg(weight), 4) FROM narratives"),
            "turn_vectors": len(self.raw.index.vector_ids()),
            "narrative_vectors": len(self.narratives.index.vector_ids()),
            "vectors_pending": pending,
            "embedder": self.embedder.model_id if self.embedder is not None else "none",
            "database": str(self.db.path),
        }

    def sessions(self, limit: int = 50) -> list[dict[str, Any]]:
        with self.lock:
            return self.raw.sessions(limit)

    # -- what consolidation reads --------------------------------------------------------------
    def session_heads(self) -> dict[int, int]:
        """Each session id → its last turn id."""
        with self.lock:
            return self.raw.heads()

    def session_turns(self, session: int | str, after_id: int = 0) -> list[Turn]:
        """A session's turns (by id or key) after turn `after_id`, oldest first."""
        with self.lock:
            sid = self.raw.session_id(session) if isinstance(session, str) else session
            return [] if sid is None else self.raw.session_turns(sid, after_id)

    def similar_turns(
        self, session: str, text: str, k: int, *, exclude: Sequence[int] = ()
    ) -> list[tuple[Turn, float]]:
        """The `k` turns of one session nearest to `text` by cosine similarity (vectors only;
        empty without an embedder), excluding `exclude` — session memory's recall."""
        if not self._bind() or not text.strip():
            return []
        qvec, _ = query_vector(self.embedder, bound_query(text)[0])
        if qvec is None:
            return []
        with self.lock:
            sid = self.raw.session_id(session)
            if sid is None:
                return []
            skip = [int(i) for i in exclude] or [0]
            where = (
                "rowid IN (SELECT id FROM turns WHERE session_id = ? AND id NOT IN"
                f" ({','.join('?' * len(skip))}))"
            )
            hits = self.raw.index.vector(qvec, _check_k(k), where, (sid, *skip))
            by_id = {t.id: t for t in self.raw.get([h.id for h in hits])}
        return [(by_id[h.id], 1.0 - (h.vec_distance or 0.0)) for h in hits if h.id in by_id]


def _time_range(column: str, since: str | None, until: str | None) -> tuple[list[str], list[Any]]:
    """SQL conditions (and their parameters) for an inclusive time window on `column`."""
    conds: list[str] = []
    params: list[Any] = []
    for op, value in ((">=", since), ("<=", until)):
        if value:
            conds.append(f"{column} {op} ?")
            params.append(value)
    return conds, params


def _rowid_filter(table: str, conds: list[str]) -> str | None:
    """A `TextIndex.search` filter selecting the rows of `table` that meet every condition."""
    return f"rowid IN (SELECT id FROM {table} WHERE {' AND '.join(conds)})" if conds else None


def _interleave(narratives: list[MemoryHit], turns: list[MemoryHit]) -> list[MemoryHit]:
    """Merge the two result lists by rank (narrative first at equal rank): their scores come
    from different fusions (cosine + boost vs reciprocal rank) and are not comparable."""
    out: list[MemoryHit] = []
    for pair in zip(narratives, turns, strict=False):
        out += pair
    longer = narratives if len(narratives) > len(turns) else turns
    return out + longer[min(len(narratives), len(turns)) :]


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInput(f"k={k!r}; ask for 1–{MAX_K} results")
    return k


def _hit(kind: str, h: Hit, **fields: Any) -> MemoryHit:
    return MemoryHit(
        type=kind,
        id=h.id,
        score=round(h.score, 6),
        lex_rank=h.lex_rank,
        lex_score=h.lex_score,
        vec_rank=h.vec_rank,
        vec_distance=h.vec_distance,
        keyword_match=h.keyword_match,
        **fields,
    )
