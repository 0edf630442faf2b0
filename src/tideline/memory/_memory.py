"""`Memory`: the one service API over raw context and narratives that every driver calls.

Writes are transactional: a turn, a narrative with its tags and links, or a whole imported file
is stored completely or not at all. Embedding happens after the rows are committed, so an embedder
that is down never loses a write: search meanwhile degrades to lexical with a warning, and the
vectors are filled in later. A process killed between the commit and the embedding leaves records
without vectors too, so every call that embeds first fills what is pending: an import fills all of
it, `sync_turn` and `write` up to `PENDING_PER_CALL` older records besides their own (a request
stays short); `embed_pending` (`tideline embed`) fills everything; `stats` counts what is left.

A write may carry an idempotency key (`tideline.store.WriteKeys`): sent again with the same key,
`write` and `sync_turn` answer what they answered the first time (`replayed`) and store nothing,
so a client whose answer was lost after the commit can always retry. `sync_turn` without a key is
idempotent by content already (the turn's hash).

One `Memory` may serve several threads (the MCP server runs tools in worker threads) over one
connection. `lock` serialises the database work; embedding — the slow part, up to a second per
512-token window here — runs outside it, so one client's long text never stalls another's call.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, suppress
from dataclasses import asdict, replace
from itertools import chain
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, cast

import numpy as np

from tideline.clock import Clock, Window, parse_time
from tideline.embed import Embedder, forget_embeddings
from tideline.errors import EmbedderError, InvalidInput, MemoryClosed, NotFound
from tideline.memory import _forget
from tideline.memory._backup import memory_records, restore_narratives
from tideline.memory._narratives import KINDS, NarrativeInput, Narratives
from tideline.memory._owner import pending_ids
from tideline.memory._question_time import Resolver, names_time, plain_resolver, turns_window
from tideline.memory._raw import (
    TURN_CONTEXT,
    NewTurn,
    RawContext,
    dated_by_neighbours,
    usable_turns,
    validate_session_key,
)
from tideline.memory._results import (
    Forgetting,
    FoundFact,
    ImportProblem,
    ImportSummary,
    Narrative,
    RestoredRecords,
    Trace,
    Turn,
    TurnResult,
)
from tideline.memory._search_rows import NarrativeRows, TurnRows
from tideline.memory._turn_keys import turn_keys
from tideline.memory.importers import AUTO, ImportedSession, detect, get_importer
from tideline.pathnames import check_path_name, shown
from tideline.search import (
    DEFAULT_ANALYSER,
    MODES,
    Analyser,
    Hit,
    Mode,
    Policy,
    QueryVector,
    Scope,
    SearchResult,
    TimeWindow,
    VectorOptions,
    bound_query,
    check_floor,
    found_nothing_in,
    interleave,
    pending_vector,
    retrieve,
    valid_text,
)
from tideline.store import Storage, WriteKeys, check_key

log = logging.getLogger(__name__)

#: Keeps imported facts (the profile's `import_facts`); returns (added, already there, why
#: each refused one was).
FactKeeper = Callable[[list[FoundFact]], tuple[int, int, list[str]]]
#: Restores a Tideline export's profile records (the profile's `restore`).
ProfileRestorer = Callable[[list[dict[str, Any]]], RestoredRecords]

Progress = Callable[[int, int], None]


MAX_K = 200
#: Search reads raw turns beside memories unless told not to: an imported past is findable
#: before any sleep has written narratives about it (#37; `include_turns=False` narrows).
SEARCH_TURNS = True
#: The most neighbouring turns `trace` shows on each side of a source turn.
MAX_WINDOW = 50
EMBED_BATCH = 64
PENDING_PER_CALL = 64
#: The scopes of the idempotency keys of memory's writes (the tools' names).
MEMORY_WRITE, SYNC_TURN = "memory_write", "sync_turn"
FILL_HINT = "they are embedded on the next write, or run `tideline embed`"

#: What owns an index and can list its records still without a vector (raw turns, narratives).
Owner = RawContext | Narratives


class Memory:
    """Raw context + narratives of one agent, with hybrid search and source-link tracing. Its
    two search policies are settings (`tideline.app.memory_policies` builds them)."""

    def __init__(
        self,
        db: Storage,
        embedder: Embedder | None,
        *,
        narrative_policy: Policy,
        turn_policy: Policy,
        min_score: float = 0.0,
        lock: AbstractContextManager[object] | None = None,
        analyser: Analyser = DEFAULT_ANALYSER,
        turn_context: int = TURN_CONTEXT,
        vectors: VectorOptions = VectorOptions(),  # noqa: B008 - frozen, so one default is safe
        clock: Clock,
        time_window: Resolver | None = None,
        keep_facts: FactKeeper | None = None,
        restore_profile: ProfileRestorer | None = None,
    ):
        self.db = db
        self.clock = clock
        self.min_score = check_floor(min_score)
        self.lock = lock or threading.RLock()
        self.embedder = embedder
        self.narrative_policy = narrative_policy
        self.turn_policy = turn_policy
        self.raw = RawContext(db, analyser, turn_context, clock=clock)
        self.narratives = Narratives(db, analyser, clock=clock)
        self.keys = WriteKeys(db, clock)
        #: A question's window of the user's time (`_time_window`): the composition root passes
        #: the profile's, which also knows the calendar's events ("before the trip").
        self.time_window: Resolver = time_window or plain_resolver(self.raw, clock)
        #: Where imported facts go (the profile's `import_facts`, from the composition root);
        #: None: a memory without a profile, which counts them as left out.
        self.keep_facts = keep_facts
        #: Puts back a Tideline export's profile records (the profile's `restore`).
        self.restore_profile = restore_profile
        for index in (self.raw.index, self.narratives.index):
            index.configure(vectors)
        self.warnings: list[str] = []
        self._vectors_ready = False
        self._closed = threading.Event()

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
            older = owner.texts_without_vectors(None if budget is None else len(fresh) + budget)
        items = [r for r in older if r[0] not in fresh][:budget] + list(new)
        if not items:
            return 0
        report = owner.index.fill_vectors(
            self.embedder,
            items,
            batch=EMBED_BATCH,
            progress=progress,
            guard=self.lock,
            hint=FILL_HINT,
        )
        if report.warning:
            log.warning(report.warning)
            self.warnings.append(report.warning)
        return report.embedded + report.reused

    def embed_pending(self, progress: Progress | None = None) -> int:
        """Embed every turn and narrative that has no vector yet (after an outage, a kill or a
        model change)."""
        done = self._fill(self.narratives) + self._fill(self.raw, progress=progress)
        self.build_search_files()
        return done

    def build_search_files(self, *, background: bool = False) -> int:
        """Bring the vector and lexical files of the large indexes up to date (docs/memory.md,
        "Search at scale"): now, or (`background`) in a thread of this process, which keeps the
        vector files up to date after writes too — the server. Returns the files built or
        started."""
        if background:
            for index in (self.raw.index, self.narratives.index):
                index.configure(replace(index.options, background=True))
            threading.Thread(
                target=self._build_in_background, name="search-files", daemon=True
            ).start()
            return 0
        return self._build_files()

    def close(self) -> None:
        """Stop the background builder's use of the shared connection (it is about to close);
        a build under way on connections of its own ends at its next turn on the shared one."""
        with self.lock:
            self._closed.set()

    def _build_in_background(self) -> None:
        with suppress(MemoryClosed):
            self._build_files()

    def _build_files(self) -> int:
        guard = _OpenGuard(self.lock, self._closed)
        done = 0
        for index in (self.raw.index, self.narratives.index):
            with guard:  # the shared connection: reads take turns with the other threads
                file = index.large_vector_file()
                due = file is not None and file.due()
                lexical = index.lexical_file_due()
            if file is not None and due:
                done += file.build()  # on connections of its own
            if lexical:
                done += index.build_lexical_file(guard=guard)
        return done

    def pending_vectors(self) -> int:
        """Turns and narratives the configured embedder has not embedded yet."""
        if self.embedder is None or self.embedder.model_id == "none" or not self.db.vec_enabled:
            return 0
        total = 0
        with self.lock:
            for owner in (self.raw, self.narratives):
                ids = owner.ids()
                bound = owner.index.model_id == self.embedder.model_id
                total += len(pending_ids(ids, owner.index) if bound else ids)
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
        idempotency_key: str | None = None,
    ) -> TurnResult:
        """Append one turn; the same turn sent twice is stored once, and a turn sent again with
        its idempotency key gets the first answer back."""
        key = check_key(idempotency_key)
        turn = NewTurn(role, text, speaker, timestamp, external_id)
        request = {"session": session, **asdict(turn)}
        with self.lock, self.db.transaction():
            first = self.keys.replay(SYNC_TURN, key, request) if key else None
            if first is not None:
                return TurnResult(first["id"], first["session_id"], False, replayed=True)
            results, new, sid = self.raw.add_turns(session, [turn])
            tid, created = results[0]
            if key:
                self.keys.record(SYNC_TURN, key, request, {"id": tid, "session_id": sid})
        self._fill(self.raw, new, PENDING_PER_CALL)
        return TurnResult(tid, sid, created)

    def import_file(
        self,
        path: str | Path,
        fmt: str = AUTO,
        progress: Progress | None = None,
        session: str | None = None,
    ) -> ImportSummary:
        """Import a conversation file (one transaction), then embed the new turns.

        `fmt` "auto" lets the importers recognise the file (the summary says which). A record
        that breaks a rule is a problem naming its line or place and is left out; the rest is
        imported. A file with nothing to import is a problem too, so it never passes silently.
        """
        path = Path(path)
        if fmt != AUTO:
            get_importer(fmt)
        if session is not None:
            session = validate_session_key(session)
        _require_file(path, "conversation" if fmt == AUTO else fmt)
        try:
            name = detect(path) if fmt == AUTO else fmt
            batch = get_importer(name).read(path)
        except OSError as exc:
            raise _unreadable(path, exc) from None
        summary = ImportSummary(str(path), name, detected=fmt == AUTO)
        facts: list[FoundFact] = []
        with self.lock, self.db.transaction():
            try:  # `later` sessions are read as they are stored: the file's read goes on here
                for s in chain(batch.sessions, batch.later):
                    facts += self._import_session(s, session or s.key, name, summary)
            except OSError as exc:
                raise _unreadable(path, exc) from None
            summary.skipped, summary.skipped_kinds = batch.skipped, dict(batch.skipped_kinds)
            summary.problems[:0] = batch.problems  # the file's own first, as they were read
            if batch.narratives:
                added, existing, problems = restore_narratives(
                    self.raw, self.narratives, batch.narratives
                )
                summary.narratives_added, summary.narratives_existing = added, existing
                summary.problems += problems
        if batch.profile:
            self._restore_profile(batch.profile, summary)
        if facts and self.keep_facts is None:
            summary.skipped += len(facts)
            summary.skipped_kinds["facts (no profile to keep them)"] = len(facts)
        elif facts and self.keep_facts is not None:
            summary.facts_added, summary.facts_existing, refused = self.keep_facts(facts)
            summary.problems += [ImportProblem(None, why) for why in refused]
        summary.refused = len(summary.problems)
        if not summary.found:
            summary.problems.append(ImportProblem(None, _nothing_found(path, summary)))
        self.embed_pending(progress)  # the new turns and whatever an earlier run left behind
        summary.warnings = list(self.warnings)
        if summary.undated:
            summary.warnings.append(
                f"{summary.undated} turns have no time, nor a dated turn or conversation time"
                " beside them; they are dated at import time"
            )
        return summary

    def _restore_profile(self, records: list[dict[str, Any]], summary: ImportSummary) -> None:
        """Hand a backup's profile records to the profile; what it does not take back (or,
        without a profile, all of them) is counted as left out by kind."""
        if self.restore_profile is None:
            done = RestoredRecords(
                not_restored=Counter(
                    f"{r['type']} records (no profile to keep them)" for r in records
                )
            )
        else:
            done = self.restore_profile(records)
        summary.facts_added += done.added.pop("fact", 0)
        summary.facts_existing += done.existing.pop("fact", 0)
        summary.profile_added = dict(done.added)
        summary.profile_existing = dict(done.existing)
        summary.problems += done.problems
        left = dict(done.not_restored)
        if done.evidence_left_out:
            left["fact evidence without its turn here"] = done.evidence_left_out
        for kind, n in left.items():
            summary.skipped += n
            summary.skipped_kinds[kind] = n

    def _import_session(
        self, s: ImportedSession, key: str, fmt: str, summary: ImportSummary
    ) -> list[FoundFact]:
        """Store one imported session's usable turns; each unusable one becomes a problem that
        says where it came from. Returns the session's facts with the turns that back them (a
        fact whose turn was refused goes with it)."""
        turns, rejected = usable_turns(key, s.turns)
        for n, exc in rejected:
            origin = s.origins[n - 1] if 0 < n <= len(s.origins) else None
            if isinstance(origin, int):
                summary.problems.append(ImportProblem(origin, str(exc)))
            elif origin is not None:
                summary.problems.append(ImportProblem(None, f"{origin}: {exc}"))
            else:
                where = f"session {key[:80]!r} turn {n}: " if n else ""
                summary.problems.append(ImportProblem(None, f"{where}{exc}"))
        if not turns and s.forgotten is None:
            return []
        turns, undated = dated_by_neighbours(key, turns, s.created_at)
        summary.undated += undated
        results, _, _ = self.raw.add_turns(
            key, turns, source=s.source or fmt, title=s.title, created_at=s.created_at
        )
        if s.forgotten is not None:
            self.raw.mark_session_forgotten(key, *s.forgotten)
        created = sum(made for _, made in results)
        summary.sessions += 1
        summary.turns_added += created
        summary.turns_existing += len(results) - created
        refused = {n - 1 for n, _ in rejected}
        kept = [i for i in range(len(s.turns)) if i not in refused]
        stored = {
            i: (tid, t.timestamp) for i, (tid, _), t in zip(kept, results, turns, strict=True)
        }
        return [FoundFact(fact, *stored[i]) for i, fact in s.facts if i in stored]

    def forget(
        self,
        *,
        turns: Sequence[int] = (),
        session: str | None = None,
        narratives: Sequence[int] = (),
        query: str | None = None,
        why: str | None = None,
        confirm: bool = False,
    ) -> Forgetting:
        """What these targets name (live turns, a session, narratives, every record containing
        the query's words); erased, leaving tombstones, only with `confirm` — a person sees the
        list first."""
        with self.lock:
            planned = _forget.plan(
                self.raw,
                self.narratives,
                turns=turns,
                session=session,
                narrative_ids=narratives,
                query=query,
                why=why,
            )
            erase = confirm and not planned.empty
            texts = _forget.carry_out(self.raw, self.narratives, planned) if erase else []
        forget_embeddings(self.embedder, texts)
        return planned

    def export_records(self) -> list[dict[str, Any]]:
        """Every session, turn and narrative as a Tideline export stores them (tombstones too)."""
        with self.lock:
            return list(memory_records(self.raw, self.narratives))

    # -- narratives --------------------------------------------------------------------------
    def write(self, idempotency_key: str | None = None, **fields: Any) -> Narrative:
        """Validate and store a narrative (see `NarrativeInput` for fields and limits); sent
        again with its idempotency key, the narrative the first call stored, `replayed`."""
        key = check_key(idempotency_key)
        data = NarrativeInput.from_mapping(fields).validated()
        request = asdict(data)
        with self.lock:
            with self.db.transaction():
                first = self.keys.replay(MEMORY_WRITE, key, request) if key else None
                if first is None:
                    self.raw.require(data.source_links)
                    nid = self.narratives.insert(data)
                    if key:
                        self.keys.record(MEMORY_WRITE, key, request, {"id": nid})
                else:
                    nid = first["id"]
            narrative = self.narratives.require(nid)
            new = self.narratives.text_rows([nid]) if first is None else []
        self._fill(self.narratives, new, PENDING_PER_CALL)
        return replace(narrative, replayed=True) if first is not None else narrative

    def trace(self, narrative_id: int, window: int = 2) -> Trace:
        """A narrative's source turns, each with `window` neighbouring turns: the texture behind it."""
        if isinstance(narrative_id, bool) or not isinstance(narrative_id, int):
            raise InvalidInput(
                f"narrative id {narrative_id!r} is not an integer; find ids with memory_search"
            )
        if not 0 <= window <= MAX_WINDOW:
            raise InvalidInput(f"window={window}: use 0–{MAX_WINDOW} neighbouring turns")
        with self.lock:
            narrative = self.narratives.require(narrative_id)
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
        include_turns: bool = SEARCH_TURNS,
        mode: str = "hybrid",
        qvec: np.ndarray | None = None,
        narrative_fusion: Literal["rrf", "weighted"] | None = None,
        min_score: float | None = None,
        today: str | None = None,
    ) -> SearchResult:
        """Hybrid search over narratives (by the narrative policy) and raw turns (by the turn
        policy; not with `include_turns=False`, nor under a memory-only filter — `kind`, `tags`,
        `min_weight` — that no turn can meet), in one list by the one relevance. `qvec` is the query's vector when the caller
        has it already (injection); `narrative_fusion` overrides the narrative policy's fusion;
        `min_score` overrides the relevance floor (`search_min_score`); `today` (ISO) is what a
        question's relative time words are read against (default: the newest turn's day)."""
        k = _check_k(k)
        floor = self.min_score if min_score is None else check_floor(min_score)
        min_weight = _check_min_weight(min_weight)
        if mode not in MODES:
            raise InvalidInput(f"mode={mode!r}; use one of {list(MODES)}")
        if kind is not None and kind not in KINDS:
            raise InvalidInput(f"kind={kind!r} is unknown; use one of {list(KINDS)}")
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is empty; pass the words or question to search for")
        query = valid_text(query)
        include_turns = include_turns and kind is None and not tags and min_weight is None
        since_t, until_t = parse_time(since, "since"), parse_time(until, "until", end_of_day=True)
        query, cut = bound_query(query)
        warnings: list[str] = [cut] if cut else []
        pending: QueryVector = qvec
        if qvec is None and mode != "lex":
            pending = self._pending_vector(query)
        policy = replace(self.narrative_policy, floor=floor)
        if narrative_fusion is not None:
            policy = replace(policy, fusion=narrative_fusion)
        with self.lock:
            memories = NarrativeRows(self.narratives)  # read once, with the memory keys'
            # the time a question names, unless the caller filtered by time already
            timed = policy.window or (include_turns and self.turn_policy.window)
            asked = self.window_for(query, today) if timed and not (since_t or until_t) else None
            window = None
            if asked is not None and policy.window:
                narrowed = self.narratives.filter(asked.since, asked.until, min_weight, tags, kind)
                window = TimeWindow(asked, narrowed, memories.texts)
            # the turns first: their lexical lists, the larger, overlap the query's embedding
            rows = TurnRows(self.raw)
            turns = (
                self._turn_retrieval(
                    query,
                    pending,
                    k,
                    mode,
                    since_t,
                    until_t,
                    None,
                    floor,
                    asked=asked,
                    rows=rows,
                    memories=memories,
                )
                if include_turns
                else None
            )
            found = retrieve(
                self.narratives.filter(since_t, until_t, min_weight, tags, kind),
                query,
                pending,
                k,
                cast(Mode, mode),
                policy,
                texts=memories.texts,
                window=window,
            )
            hits = self._narrative_hits(found.top(k))
            left_out = found.left_out
            warnings += found.warnings
            signals = found.signals
            if turns is not None:
                warnings += turns.warnings
                left_out += turns.left_out
                signals = turns.signals
                hits = interleave(hits, self._turn_hits(turns.top(k), rows))
        # found in the window, or a turn said then shown (the date lever lifts those unmarked):
        # no "nothing said then"
        if any(
            h.window
            or (asked and h.created_at and h.type == "turn" and asked.contains(h.created_at))
            for h in hits[:k]
        ):
            warnings = [w for w in warnings if not found_nothing_in(w)]
        return SearchResult(
            hits[:k], found.mode, list(dict.fromkeys(warnings)), floor, left_out, signals=signals
        )

    def search_turns(
        self,
        query: str,
        k: int = 10,
        mode: str = "hybrid",
        policy: Policy | None = None,
        today: str | None = None,
    ) -> list[Hit]:
        """Raw-turn retrieval on its own, by the turn policy or `policy` (the LoCoMo
        benchmark's ablations), the relevance floor included."""
        k = _check_k(k)
        query = bound_query(query)[0]
        qvec = self._pending_vector(query) if mode != "lex" else None
        with self.lock:
            rows = TurnRows(self.raw)
            found = self._turn_retrieval(
                query,
                qvec,
                k,
                mode,
                None,
                None,
                None,
                self.min_score,
                policy,
                asked=self.window_for(query, today)
                if (policy or self.turn_policy).window
                else None,
                rows=rows,
            )
            return self._turn_hits(found.top(k), rows)

    def window_for(self, query: str, today: str | None = None) -> Window | None:
        """The stretch of the user's time `query` names (`_time_window`), or None."""
        return self.time_window(query, today) if names_time(query) else None

    def _pending_vector(self, query: str) -> QueryVector:
        """The query's vector, embedded on the query thread while the caller searches (the
        memory lock is let go while the search waits for it)."""
        return pending_vector(self.embedder if self._bind() else None, query, unlock=self.lock)

    def _turn_retrieval(
        self,
        query: str,
        qvec: QueryVector,
        k: int,
        mode: str,
        since: str | None,
        until: str | None,
        warning: str | None,
        floor: float,
        policy: Policy | None = None,
        scope: Scope | None = None,
        asked: Window | None = None,
        rows: TurnRows | None = None,
        memories: NarrativeRows | None = None,
    ) -> SearchResult:
        """The turns for `query` within the time filter, with the levers' keys and the time
        the question names (`asked`) when nothing is filtered (a filtered search must not gain
        turns from outside it). `rows`, `memories`: the search's reads of turn and narrative rows
        (`_search_rows`)."""
        policy = replace(policy or self.turn_policy, floor=floor)
        scope = scope or self.raw.filter(since, until)
        unfiltered = scope.where is None
        rows = rows or TurnRows(self.raw)
        keys = (
            turn_keys(
                self.raw,
                self.narratives,
                query,
                policy,
                self.narrative_policy,
                rows=rows,
                memories=memories,
            )
            if unfiltered
            else []
        )
        return retrieve(
            scope,
            query,
            qvec,
            k,
            cast(Mode, mode),
            policy,
            texts=rows.texts,
            warning=warning,
            keys=keys,
            groups=rows.sessions_of,
            window=turns_window(self.raw, asked, keys)
            if asked and unfiltered and policy.window
            else None,
        )

    def _narrative_hits(self, found: list[Hit]) -> list[Hit]:
        """The hits that are still narratives, with what each says (gone meanwhile: left out)."""
        by_id = {n.id: n for n in self.narratives.get([h.id for h in found], links=False)}
        return [
            h.copy(
                type="narrative",
                text=n.gesture,
                created_at=n.created_at,
                weight=n.weight,
                tags=list(n.tags),
            )
            for h in found
            if (n := by_id.get(h.id)) is not None
        ]

    def _turn_hits(self, found: list[Hit], rows: TurnRows) -> list[Hit]:
        """The hits that are still turns, with their words, time, session and speaker (read
        with the search's other turn rows, `rows`)."""
        by_id = {t.id: t for t in rows.get([h.id for h in found])}
        return [
            h.copy(type="turn", text=t.text, created_at=t.ts, session=t.session, speaker=t.speaker)
            for h in found
            if (t := by_id.get(h.id)) is not None
        ]

    # -- overview ----------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        pending = self.pending_vectors()
        with self.lock:
            return self._stats(pending)

    def _stats(self, pending: int) -> dict[str, Any]:
        return {
            **self.raw.counts(),
            **self.narratives.counts(),
            "turn_vectors": len(self.raw.index.vector_ids()),
            "narrative_vectors": len(self.narratives.index.vector_ids()),
            "vectors_pending": pending,
            "embedder": self.embedder.model_id if self.embedder is not None else "none",
            "database": str(self.db.path),
        }

    def sessions(self, limit: int = 50) -> list[dict[str, Any]]:
        with self.lock:
            return self.raw.sessions(limit)

    def turns(self, ids: Iterable[int]) -> list[Turn]:
        """These turns (the ones that exist), read under the lock: for callers in any thread."""
        with self.lock:
            return self.raw.get(ids)

    def all_narratives(self, *, links: bool = False) -> list[Narrative]:
        """Every live narrative by id (`Narratives.all`), read under the lock like `turns`."""
        with self.lock:
            return self.narratives.all(links=links)

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

    def search_session(
        self,
        session: str,
        text: str,
        k: int,
        *,
        exclude: Sequence[int] = (),
        qvec: np.ndarray | None = None,
    ) -> list[tuple[Turn, float]]:
        """The `k` turns of one session most relevant to `text`, with their relevance, leaving
        out `exclude` — session memory's recall: the turn search (`retrieve`, lexical without
        an embedder) inside the session, cut by the one relevance floor. `qvec` is the text's
        vector when the caller has it already (injection embeds a message once per turn)."""
        k = _check_k(k)
        if not isinstance(text, str) or not text.strip():
            return []
        query = bound_query(valid_text(text))[0]
        pending: QueryVector = qvec if qvec is not None else self._pending_vector(query)
        with self.lock:
            sid = self.raw.session_id(session)
            if sid is None:
                return []
            where, params = self.raw.session_filter(sid, exclude)
            scope = Scope(self.raw.index, where, tuple(params))
            rows = TurnRows(self.raw)
            found = self._turn_retrieval(
                query,
                pending,
                k,
                "hybrid",
                None,
                None,
                None,
                self.min_score,
                scope=scope,
                rows=rows,
            )
            hits = found.top(k)
            by_id = {t.id: t for t in rows.get([h.id for h in hits])}
        return [(by_id[h.id], h.score) for h in hits if h.id in by_id]


def _require_file(path: Path, fmt: str) -> None:
    """`NotFound` unless `path` names a file; a name no file can have is `InvalidInput`."""
    check_path_name(path)
    try:
        found = path.is_file()
    except OSError as exc:  # EACCES on a parent folder, a path that grows too long once resolved
        raise InvalidInput(
            f"{shown(path)} cannot be opened: {exc.strerror}; fix the path"
        ) from None
    if not found:
        article = "an" if fmt[:1].lower() in "aeiou" else "a"
        raise NotFound(f"{shown(path)} is not a file; pass the path of {article} {fmt} export")


def _unreadable(path: Path, exc: OSError) -> InvalidInput:
    return InvalidInput(f"cannot read {path}: {exc.strerror or exc}; check the file's permissions")


def _nothing_found(path: Path, summary: ImportSummary) -> str:
    """Why an import stored nothing, and what to try."""
    skipped = ", ".join(f"{n} {kind}" for kind, n in summary.skipped_kinds.items())
    left = f" ({summary.skipped} left out: {skipped})" if skipped else ""
    how = "recognised it as" if summary.detected else "read it as"
    return (
        f"nothing to import from {path.name}: tideline {how} {summary.format} and found no "
        f"turns to keep{left}; check it is the export you meant, or pass --format"
    )


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInput(f"k={k!r}; ask for 1–{MAX_K} results")
    return k


def _check_min_weight(value: float | None) -> float | None:
    """A weight (0–1) or None: `float()` of a huge int overflows and NaN would match nothing."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if isinstance(value, bool) or not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise InvalidInput(f"min_weight={value!r}; pass a number from 0 to 1 (weights are 0–1)")
    return number


class _OpenGuard:
    """The shared lock, refused once the memory is closed (the connection is going away)."""

    def __init__(self, lock: AbstractContextManager[object], closed: threading.Event):
        self.lock, self.closed = lock, closed

    def __enter__(self) -> None:
        self.lock.__enter__()
        if self.closed.is_set():
            self.lock.__exit__(None, None, None)
            raise MemoryClosed

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.lock.__exit__(kind, error, trace)
