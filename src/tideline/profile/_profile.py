"""`Profile`: the service the Sleep pipeline and the drivers call.

- Reads: facts by status/category/subject with their evidence (turn texts through memory's public
  API), a fact's timeline, the active profile with injection weights, the pipeline's `read()`.
- Writes go through changesets applied in one short transaction. `apply` is optimistic: it
  refuses a changeset computed from an older version (`ProfileChanged`), so no write lock is held
  while an LLM thinks. `reject` and `close` are one-change changesets checked only against the
  lifecycle — the seed's rule: a person may mark a fact wrong or closed, never delete or edit it.
- Run records are written outside the profile transaction so a failed run stays recorded.
- `lock` is the connection's lock shared with `Memory` (one connection, many MCP worker threads,
  a sleep's thread): every call that touches the connection takes it, one-statement reads and
  run records too (apsw refuses two threads inside one connection); the LLM never runs under it.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from tideline.clock import (
    EARLIEST,
    LATEST,
    Clock,
    Window,
    from_text,
    parse_time,
    to_text,
)
from tideline.embed import Embedder
from tideline.errors import InvalidInput, ProfileChanged
from tideline.memory import FoundFact, Memory, RestoredRecords, present
from tideline.profile._apply import Applied, Applier, Stores, TurnCheck
from tideline.profile._as_of import (
    ProfileAt,
    edges_at,
    events_at,
    facts_at,
    people_at,
    strategies_at,
)
from tideline.profile._backing import apply_backing, backing, confidence, links_of
from tideline.profile._calendar import time_window
from tideline.profile._changeset import Because, Changeset
from tideline.profile._decay import injection_weight, is_expired
from tideline.profile._dedupe import fact_key
from tideline.profile._digests import SessionDigest
from tideline.profile._drafts import choice
from tideline.profile._fact_index import Indexed, Theme
from tideline.profile._facts import Link
from tideline.profile._imported import fact_changes
from tideline.profile._lifecycle import RULES, Rules
from tideline.profile._plans import asked_since
from tideline.profile._profile_version import VersionStore
from tideline.profile._records import (
    ACTIVE_STATUSES,
    RUN_STATUSES,
    STATUSES,
    ActiveFact,
    Edge,
    Event,
    Fact,
    FactTimeline,
    Observation,
    Relationship,
    SleepRun,
    Snapshot,
    Strategy,
    Trajectory,
    UserModelEntry,
)
from tideline.profile._restore import restore_profile
from tideline.profile._snapshot import ProfileState, render_snapshot
from tideline.profile._view import ProfileView
from tideline.search import Hit, valid_text
from tideline.store import Storage

BACKING_SLICE = 100  # facts whose backing one locked read fetches (`read`; bench/profile_read.py)


class Profile:
    """Facts with a lifecycle, their evidence and everything Sleep builds around them."""

    def __init__(
        self,
        db: Storage,
        memory: Memory | None = None,
        *,
        clock: Clock,
        lock: AbstractContextManager[object] | None = None,
        rules: Rules = RULES,
    ):
        self.db = db
        self.memory = memory
        self.clock = clock
        self.rules = rules  # the lifecycle's numbers, for the Sleep steps (`_lifecycle.Rules`)
        self.lock = lock or threading.RLock()
        self.stores = Stores(db)
        self.versions = VersionStore(db)

    # -- the pipeline's read and write -------------------------------------------------------
    def version(self) -> int:
        with self.lock:
            return self.versions.current()

    def read(self) -> ProfileView:
        """One consistent picture (no write lock held) to compute a changeset against."""
        s = self.stores
        with self.lock, self.versions.reading():
            facts = s.facts.list(ACTIVE_STATUSES)
            strategies = [x for x in s.strategies.list() if x.status != "resolved"]
            live = {f.id for f in facts}
            named = sorted({x.fact_id for x in strategies if x.fact_id and x.fact_id not in live})
            view = ProfileView(
                version=self.versions.current(),
                now=self.clock(),
                facts=facts,
                events=s.events.list(active=True),  # expired ones too: step 9 closes them
                relationships=s.people.list(),
                strategies=strategies,
                user_model=s.portrait.user_model(),
                trajectory=s.portrait.trajectory(),
                processed=s.runs.processed(),
                questioned=[s.facts.require(i) for i in named],
            )
            challengers = s.facts.challengers()
        # What backs the facts is read in slices, each under the lock on its own, so a large
        # profile never holds writers for the whole count. Evidence written meanwhile can only
        # come from an apply, which moves the version: this view's changeset is then refused.
        for start in range(0, len(facts), BACKING_SLICE):
            self._backed(facts[start : start + BACKING_SLICE], challengers=challengers)
        return view

    def settled_after(self, at: str) -> list[Strategy]:
        """The strategies a rule settled (lapsed or obsolete) after `at` (valid time): a run
        whose words were said at `at` judges them again."""
        with self.lock:
            return self.stores.strategies.settled_after(at)

    def expired_after(self, at: str) -> list[tuple[Fact, str]]:
        """The facts closed by expiry after `at` (valid time), backed, each with the status it
        had: a run whose evidence was said at `at` still finds them believed (and may reopen
        them, `Changeset.reopen`)."""
        with self.lock:
            found = self.stores.facts.expired_after(at)
        self._backed([f for f, _ in found])
        return found

    def apply(
        self, changeset: Changeset, *, run_id: int | None = None, dream_run_id: int | None = None
    ) -> Applied:
        """All of the changeset in one transaction, or nothing; refused if the data moved.
        `run_id`: the Sleep run writing it; `dream_run_id`: the dream run, when a dream layer
        writes (combing's probes), so every row says which run made it."""
        return self._write(changeset, run_id=run_id, check=True, dream_run_id=dream_run_id)

    def _write(
        self,
        changeset: Changeset,
        *,
        run_id: int | None,
        check: bool,
        dream_run_id: int | None = None,
    ) -> Applied:
        applier = Applier(
            self.stores, self.clock(), run_id, self._check_turns(), dream_run_id, self._turn_info
        )
        with self.lock, self.db.transaction():
            current = self.versions.current()
            if check and current != changeset.base_version:
                raise ProfileChanged(
                    f"the profile changed while this changeset was computed (read at version "
                    f"{changeset.base_version}, now {current}); read it again and recompute"
                )
            applier.run(changeset.ops)
            version = self.versions.bump(applier.now)
        return Applied(version, applier.ids, applier.counts)

    def _check_turns(self) -> TurnCheck | None:
        return None if self.memory is None else self.memory.raw.require

    # -- what a person may do: reject or close, never delete or edit -------------------------
    def reject(self, fact_id: int, why: str) -> Fact:
        """Mark a fact wrong; it stays on the timeline with its end time and reason. The snapshot
        (T0) is rebuilt in the same transaction, so the fact leaves the identity block at once."""
        cs = Changeset(self.version())
        cs.reject(fact_id, why)
        cs.rebuild_snapshot()
        self._write(cs, run_id=None, check=False)
        return self.fact(fact_id)

    def close(
        self,
        fact_id: int,
        *,
        why: str | None = None,
        at: str | None = None,
        successor: int | None = None,
    ) -> Fact:
        """Mark a fact no longer true (at `at`, default now); the row and its end time stay, and
        the snapshot is rebuilt in the same transaction (as `reject`). With `successor` (a live
        fact that replaced it), it ends when that one began and joins its timeline — what an
        arbitration's `accept_new` leaves, decided by a person."""
        cs = Changeset(self.version())
        because = None
        if successor is not None:
            cs.succeed(fact_id, successor)
            with self.lock:
                at = self.stores.facts.require(successor).valid_from
            because = Because("superseded by", successor)
        cs.close(fact_id, why=why or "closed by hand", at=at, because=because)
        cs.rebuild_snapshot()
        self._write(cs, run_id=None, check=False)
        return self.fact(fact_id)

    # -- facts -------------------------------------------------------------------------------
    def restore(self, records: Sequence[Mapping[str, Any]]) -> RestoredRecords:
        """Put back the profile records of a Tideline export (`_restore`) in one transaction;
        the snapshot is rebuilt when any came back."""
        if not records or self.memory is None:
            return RestoredRecords(
                not_restored=Counter(
                    f"{r.get('type')} records (no memory to link)" for r in records
                )
            )
        raw = self.memory.raw

        def sessions(turn_ids: list[int]) -> dict[int, int]:
            return {t.id: t.session_id for t in raw.get(turn_ids)}

        with self.lock, self.db.transaction():
            now = to_text(self.clock())
            done = restore_profile(self.stores, records, raw.ids_by_hash, sessions, now)
            if done.added:
                self.versions.bump(now)
        if done.added:
            cs = Changeset(self.version())
            cs.rebuild_snapshot()
            self._write(cs, run_id=None, check=False)
        return done

    def import_facts(self, found: Sequence[FoundFact]) -> tuple[int, int, list[str]]:
        """Keep facts imported from a peer's memory (`_imported`); returns (added, already
        there, why each refused one was). The snapshot is rebuilt in the same transaction when
        any were added."""
        known = (fact_key(f) for f in self.facts(evidence=False))
        changes, existing, refused = fact_changes(found, known, self.version())
        added = len(changes)
        if added:
            changes.rebuild_snapshot()
            self._write(changes, run_id=None, check=False)
        return added, existing, refused

    def facts(
        self,
        *,
        status: str | Sequence[str] | None = None,
        category: str | None = None,
        subject: str | None = None,
        evidence: bool = True,
    ) -> list[Fact]:
        statuses = self._statuses(status)
        # a lone surrogate (JSON's "\ud800") cannot be bound to SQL; it names nothing stored
        category = None if category is None else valid_text(category)
        subject = None if subject is None else valid_text(subject)
        with self.lock:
            found = self.stores.facts.list(statuses or None, category, subject)
            return self._with_evidence(found) if evidence else found

    @staticmethod
    def _statuses(status: str | Sequence[str] | None) -> list[str]:
        statuses = [status] if isinstance(status, str) else list(status or [])
        for st in statuses:
            choice(st, "status", STATUSES)
        return statuses

    def as_of(
        self,
        when: str,
        *,
        status: str | Sequence[str] | None = None,
        category: str | None = None,
        subject: str | None = None,
    ) -> ProfileAt:
        """The profile as it stood on `when` (an ISO date or time; a bare date means its last
        second) in the user's time: the facts believed then, each as it stood — its status,
        mentions and evidence by then (`_as_of`; `status`, `category`, `subject` filter them) —
        the events, people, open questions and links then, and the snapshot as it would have
        read."""
        at = parse_time(when, "as_of", end_of_day=True)
        if at is None:
            raise InvalidInput(
                "as_of is empty; give a date like 2023-06-15 or 2023-06-15T18:00:00Z"
            )
        statuses = self._statuses(status)
        s = self.stores
        with self.lock, self.versions.reading():  # what can hold then, read in SQL
            found = self._with_evidence(s.facts.valid_at(at), said_by=at)
            changes = s.facts.changes([f.id for f in found], by=at)
            events = s.events.known_at(at)
            people = s.people.list(seen_by=at)
            strategies = s.strategies.list(held_at=at)
            edges = s.edges.list(live=False, held_at=at)
            model = s.portrait.user_model_at(at)
            trajectory = s.portrait.trajectory(at)
            facts = self._backed_then(facts_at(found, changes, at))
        shown = {f.id for f in facts}
        state = ProfileState(
            now=from_text(at),
            facts=facts,
            people=people_at(people, at),
            events=events_at(events, at),
            user_model=model,
            edges=edges_at(edges, at, shown),
            trajectory=trajectory,
        )
        text, _ = render_snapshot(state, f"What I knew as of {at[:10]} (the user's time)")
        return ProfileAt(
            at,
            [
                f
                for f in facts
                if (not statuses or f.status in statuses)
                and category in (None, f.category)
                and subject in (None, f.subject)
            ],
            list(state.events),
            list(state.people),
            [x for x in strategies_at(strategies, at) if x.fact_id is None or x.fact_id in shown],
            list(state.edges),
            text,
        )

    def fact(self, fact_id: int, *, evidence: bool = True) -> Fact:
        with self.lock:
            fact = self.stores.facts.require(fact_id)
            return self._with_evidence([fact])[0] if evidence else fact

    def _with_evidence(self, facts: list[Fact], *, said_by: str | None = None) -> list[Fact]:
        """Facts with their evidence rows (`said_by`: only those said by then), the turns' words
        and what backs them."""
        links = self.stores.facts.evidence([f.id for f in facts], said_by=said_by)
        turn_ids = sorted({e.turn_id for es in links.values() for e in es if e.turn_id})
        turns = self.memory.raw.get(turn_ids) if self.memory is not None and turn_ids else []
        said = {t.id: t.text for t in turns}
        for fact in facts:
            fact.evidence = links[fact.id]
            for ev in fact.evidence:
                ev.text = said.get(ev.turn_id) if ev.turn_id else None
        info = {t.id: (t.session_id, t.ts) for t in turns}
        return self._backed(facts, {f.id: links_of(f.evidence) for f in facts}, info)

    def _backed(
        self,
        facts: list[Fact],
        links: dict[int, list[Link]] | None = None,
        info: dict[int, tuple[int, str]] | None = None,
        challengers: dict[int, list[int]] | None = None,
    ) -> list[Fact]:
        """What backs each fact (`_backing`): its sessions, valid-time span, challengers; what
        is not given is read here, under the lock (the counting is not)."""
        with self.lock:
            if links is None:
                links = self.stores.facts.links([f.id for f in facts])
            if info is None:
                info = self._turn_info(sorted({x[0] for ls in links.values() for x in ls if x[0]}))
            observed = sorted({x[1] for ls in links.values() for x in ls if x[1]})
            sessions = self.stores.observations.sessions(observed)
            if challengers is None:
                challengers = self.stores.facts.challengers()
        for fact in facts:
            apply_backing(fact, backing(links[fact.id], info, sessions))
            fact.disputed_by = challengers.get(fact.id, [])
        return facts

    def _backed_then(self, facts: list[Fact]) -> list[Fact]:
        """Facts as of a date (`facts_at`: their evidence said by then) with what backed them
        then: sessions, the span said, the confidence those give, the disputes of then."""
        turn_ids = sorted({e.turn_id for f in facts for e in f.evidence if e.turn_id})
        observed = sorted({e.observation_id for f in facts for e in f.evidence if e.observation_id})
        info, sessions = self._turn_info(turn_ids), self.stores.observations.sessions(observed)
        shown = {f.id for f in facts}
        for f in facts:
            b = backing(links_of(f.evidence), info, sessions)
            apply_backing(f, b)
            if f.prior is not None:
                f.confidence = confidence(f.prior, b.sessions, b.against)
            f.disputed_by = [i for i in f.disputed_by if i in shown]
        return facts

    def _turn_info(self, turn_ids: Sequence[int]) -> dict[int, tuple[int, str]]:
        """Each turn's session and valid time (the applier recomputes confidence with it)."""
        if self.memory is None or not turn_ids:
            return {}
        return self.memory.raw.times(turn_ids)

    def timeline(self, fact_id: int) -> FactTimeline:
        """The fact, its whole supersedes chain (oldest first) and every status change in it."""
        with self.lock:
            fact = self.fact(fact_id)
            root = fact
            while root.supersedes is not None:
                root = self.stores.facts.require(root.supersedes)
            chain_ids, queue = [], [root.id]
            while queue:
                fid = queue.pop(0)
                chain_ids.append(fid)
                queue += self.stores.facts.superseded_by(fid)
            chain = [self.fact(i) for i in chain_ids]
            return FactTimeline(fact, chain, self.stores.facts.changes(chain_ids))

    def active(self) -> list[ActiveFact]:
        """The profile to inject: live, unexpired facts, heaviest first (near expiry weighs less)."""
        now = self.clock()
        with self.lock:
            found = self.stores.facts.list(ACTIVE_STATUSES)
        live = [f for f in found if not is_expired(f, now)]
        weighted = [ActiveFact(f, injection_weight(f, now)) for f in live]
        return sorted(weighted, key=lambda a: (-a.weight, a.fact.id))

    # -- the rest of the profile -------------------------------------------------------------
    def observations(self, *, processed: bool | None = None) -> list[Observation]:
        with self.lock:
            return self.stores.observations.list(processed=processed)

    def relationships(self) -> list[Relationship]:
        with self.lock:
            return self.stores.people.list()

    def events(self, *, active: bool | None = True) -> list[Event]:
        """Events by start. `active=True`: neither closed nor past their expiry now (an expired
        event Sleep has not closed yet is not active); False: the others; None: all."""
        with self.lock:
            return self.stores.events.list(active=active, now=to_text(self.clock()))

    def calendar(self, since: str | None = None, until: str | None = None) -> list[Event]:
        """The events whose date range (valid time) overlaps [since, until] (ISO dates or times;
        a bare `until` date means its end), by start — closed and expired ones too: the calendar
        says what happened when, not what is still relevant."""
        start = parse_time(since, "since") or to_text(EARLIEST)
        end = parse_time(until, "until", end_of_day=True) or to_text(LATEST)
        with self.lock:
            return self.stores.events.between(start, end)

    def time_window(self, question: str, today: str | None = None) -> Window | None:
        """The stretch of valid time a question asks about, or None when it names none
        (`_calendar`): "what did I do last May" → that May; "before the trip" → up to the start
        of the event that best matches "trip". Relative phrases are read against `today` (ISO),
        by default the day of the latest turn (the conversation's present), else the clock."""
        with self.lock:
            reference = present(self.memory.raw if self.memory else None, today, self.clock())
        return time_window(question, reference, self.calendar)

    def edges(self, *, fact_id: int | None = None, live: bool = True) -> list[Edge]:
        with self.lock:
            return self.stores.edges.list(fact_id=fact_id, live=live)

    def strategies(self, *, status: str | None = "open") -> list[Strategy]:
        with self.lock:
            return self.stores.strategies.list(status=status)

    def questions(self) -> list[Strategy]:
        """The open strategies the agent may still ask: about no fact, about a live fact, or —
        a verify — about the expired fact it asks after. Never a clarify or probe about a fact
        already rejected or closed (the transaction that retires a fact makes them obsolete;
        this also holds for rows older than that rule), and never one that has lapsed by now
        though no sleep has settled it yet: `profile_strategy_days` after it arose in the
        user's time (`asked_since`)."""
        with self.lock:
            found = self.stores.strategies.list(status="open")
            ids = sorted({x.fact_id for x in found if x.fact_id})
            facts = {i: f for i in ids if (f := self.stores.facts.get(i)) is not None}
        now = self.clock()
        live = {i for i, f in facts.items() if f.active}
        days = dt.timedelta(days=self.rules.strategy_days)
        return [
            x
            for x in found
            if (x.kind == "verify" or x.fact_id is None or x.fact_id in live)
            and from_text(asked_since(x, facts.get(x.fact_id or 0))) + days > now
        ]

    def mark_asked(self, strategy_ids: Sequence[int]) -> list[int]:
        """Open strategies offered to the agent become `asked`, so no turn offers them again;
        returns the ids that were still open. Not a profile version: no Sleep decision reads
        open vs asked, so a conversation during a run must not make the run recompute."""
        with self.lock, self.db.transaction():
            return self.stores.strategies.ask(list(strategy_ids), to_text(self.clock()))

    def user_model(self) -> list[UserModelEntry]:
        with self.lock:
            return self.stores.portrait.user_model()

    def trajectory(self) -> Trajectory | None:
        with self.lock:
            return self.stores.portrait.trajectory()

    def snapshot(self) -> Snapshot | None:
        with self.lock:
            return self.stores.portrait.snapshot()

    def dump(self) -> list[dict[str, Any]]:
        """The profile as export records (`tideline export`): facts with their evidence, then
        observations, people, events, edges, strategies and the portrait. Turns are named by
        their hash, as in the rest of the export, so the records read the same in any home."""
        with self.lock:
            facts = self.facts()
            records: list[tuple[str, Any]] = [("fact", f) for f in facts]
            records += [("observation", o) for o in self.observations()]
            records += [("relationship", r) for r in self.relationships()]
            records += [("event", e) for e in self.events(active=None)]
            records += [("edge", e) for e in self.edges(live=False)]
            records += [("strategy", x) for x in self.strategies(status=None)]
            records += [("user_model", u) for u in self.user_model()]
            records += [("trajectory", t) for t in [self.trajectory()] if t is not None]
            records += [("snapshot", x) for x in [self.snapshot()] if x is not None]
            turn_ids = {e.turn_id for f in facts for e in f.evidence if e.turn_id}
            turn_ids |= {t for kind, r in records if kind == "observation" for t in r.turn_ids}
            hashes = self.memory.raw.hashes(sorted(turn_ids)) if self.memory else {}
            changes: dict[int, list[dict[str, Any]]] = {}
            for c in self.stores.facts.changes([f.id for f in facts]):
                change = c.to_dict()
                del change["fact_id"], change["run_id"]  # the runs are not exported
                changes.setdefault(c.fact_id, []).append(change)
        out = []
        for kind, record in records:
            row = {"type": kind, **record.to_dict()}
            if kind == "fact":
                row["changes"] = changes.get(row["id"], [])
            for ev in row.get("evidence", []) if kind == "fact" else []:
                ev["turn"] = hashes.get(ev.pop("turn_id"))
                ev.pop("text", None)
            if kind == "observation":  # its turns by hash too: ids differ between homes
                row["turns"] = [hashes[t] for t in row.pop("turn_ids") if t in hashes]
                row["type"] = kind  # its own type (statement, preference, …) has its own name
                row["observation_type"] = record.to_dict()["type"]
            out.append(row)
        return out

    def counts(self) -> dict[str, int]:
        """Rows per profile table (nothing is ever deleted, so these only grow)."""
        out: dict[str, int] = {}
        with self.lock:
            for store in vars(self.stores).values():
                out |= store.count()
        return out

    # -- session digests (step 2's summaries and tags) ----------------------------------------
    def digests(self, since: str | None = None) -> list[SessionDigest]:
        with self.lock:
            return self.stores.digests.list(since)

    def sessions_digested_since(self, at: str) -> int:
        with self.lock:
            return self.stores.digests.count_since(at)

    # -- facts as a search index, and their themes (derived; filled after a run) --------------
    def index_facts(self, embedder: Embedder | None) -> Indexed:
        """Index facts not indexed yet (text; vectors when an embedder is given)."""
        with self.lock:
            facts = self.stores.facts.list()
            index = self.stores.fact_index
            texts = index.unindexed(facts)
            if texts:
                index.add_texts(texts)
        out: Indexed = {"indexed": len(texts), "embedded": 0}
        if embedder is None or not self.db.vec_enabled or not embedder.dim:
            return out
        with self.lock:
            pending = self.stores.fact_index.unembedded(facts)
        report = self.stores.fact_index.embed(embedder, pending, self.lock)
        out["embedded"] = len(pending) - report.pending
        if report.error:
            out["error"] = report.error
        return out

    def fact_vectors(self, fact_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """Each fact's vector (numpy), for the ones embedded."""
        with self.lock:
            return self.stores.fact_index.vectors(fact_ids)

    def fact_hits(
        self,
        query: str,
        qvec: np.ndarray | None,
        k: int = 10,
        *,
        fact_ids: Sequence[int] | None = None,
    ) -> list[tuple[Fact, Hit]]:
        """Live facts nearest to `query` (hybrid with `qvec`, else lexical), each with its hit (its
        relevance and parts), for a caller that made the query vector already — injection, on
        every turn. The one floor of every search (the memory's `search_min_score`) cuts it.
        `fact_ids`: only these facts, whatever their status (an expired fact's open question,
        T1q), instead of the live ones."""
        with self.lock:
            if fact_ids is None:
                scope = self.stores.facts.status_filter(ACTIVE_STATUSES)
            else:
                scope = self.stores.facts.ids_filter(fact_ids)
            floor = self.memory.min_score if self.memory is not None else 0.0  # one floor
            hits = self.stores.fact_index.search(query, qvec, k, scope, floor)
            facts = [(self.stores.facts.get(h.id), h) for h in hits]
        return [(fact, h) for fact, h in facts if fact is not None]

    def set_themes(self, themes: Sequence[tuple[str, list[int]]]) -> None:
        with self.lock:
            self.stores.fact_index.replace_themes(themes, to_text(self.clock()))

    def themes(self) -> list[Theme]:
        with self.lock:
            return self.stores.fact_index.themes()

    # -- sleep runs --------------------------------------------------------------------------
    def start_run(self, prompt_versions: dict[str, Any] | None = None) -> int:
        with self.lock:
            return self.stores.runs.start(prompt_versions or {}, to_text(self.clock()))

    def record_run_tokens(self, run_id: int, tokens_in: int, tokens_out: int) -> None:
        """What a running run has spent so far (kept if the process dies before it finishes)."""
        with self.lock:
            self.stores.runs.log.record_tokens(run_id, tokens_in, tokens_out)

    def finish_run(
        self,
        run_id: int,
        status: str,
        *,
        steps: list[Any] | None = None,
        tokens_in: int = 0,
        tokens_out: int = 0,
        errors: list[Any] | None = None,
        version: int | None = None,
    ) -> SleepRun:
        choice(status, "run status", RUN_STATUSES)
        if status == "running":
            raise InvalidInput("finish_run: status must be done, failed or skipped")
        with self.lock:
            self.stores.runs.finish(
                run_id,
                status=status,
                steps=steps or [],
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                errors=errors or [],
                version=version,
                now=to_text(self.clock()),
            )
            run = self.stores.runs.get(run_id)
        assert run is not None
        return run

    def close_interrupted_runs(self) -> list[int]:
        """Runs left `running` while the caller holds the Sleep lock were killed mid-way: they
        become `failed`, saying so."""
        with self.lock:
            return self.stores.runs.log.close_interrupted(to_text(self.clock()))

    def runs(self, limit: int = 20) -> list[SleepRun]:
        with self.lock:
            return self.stores.runs.list(limit)
