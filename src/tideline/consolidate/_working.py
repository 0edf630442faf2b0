"""`Working`: a changeset that also keeps the profile as it will be once applied.

The fourteen steps run one after another against one read of the profile, and each must see what
the earlier ones decided: a fact supported in step 4 has one more mention when step 5's fast path
looks at it; a fact closed by arbitration (6) gets no edges (7); a fact created this run can be
disputed, confirmed or named an anchor before it has an id. So every change goes through this
subclass, which records the op (the real `Changeset`) and updates a projection of the facts,
edges, people, events and user model.

New facts get negative projected ids (-1, -2, ...): `key()` turns them into the changeset's `Ref`s,
and the LLM steps see them like any id. Each change is checked against the projection with the
profile's own lifecycle rules, so an illegal decision fails while computing, not inside the
transaction. Because the class is a `Changeset`, the profile's planners (`plan_fast_path`,
`plan_expiry`, `plan_maturity`, `plan_dedupe`, `settle`) run on it unchanged.

Two clocks: `now` is the read's time (record time, and the present the last rule — expiry —
measures against); valid times come from `times`, the run's turns' own timestamps (`read`).
Every change the projection makes carries its valid time explicitly in the op (`valid_from`,
`seen_at`, `at`), so a fact's start that a later step compares with (an arbitration closing its
predecessor at it) is the start stored — never a second read of the clock.

Replay: the projection is what a run of each night would have seen. `live_at` is the facts
believed when some words were said (expired ones are not); each support matures its fact at
once (`_mature`); facts an earlier run closed by expiry after this run's first words are believed
again (`revive`) — reopened if this run touches them (`_wake`), closed again unchanged if not
(`rest`). So a history imported in stages gives the profile of one import.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from tideline.clock import from_text, to_text
from tideline.memory import Turn
from tideline.profile import (
    ACTIVE_STATUSES,
    STRATEGY_DAYS,
    Because,
    Changeset,
    Edge,
    EventDraft,
    Fact,
    FactDraft,
    ObservationDraft,
    PersonMention,
    ProfileView,
    Ref,
    Relationship,
    Strategy,
    TrajectoryFields,
    check_live,
    check_transition,
    end_at,
    expires_at,
    first_said,
    last_said,
    matured_decay,
    merge_mention,
    person_key,
    plan_strategies,
    question_time,
)

FINAL = ("rejected", "closed")
UNREAD = dt.datetime(1, 1, 1, tzinfo=dt.UTC)  # a placeholder until step 1 reads the profile
FactRef = int | Ref
ObservationRef = int | Ref


class _FactEvidence(TypedDict, total=False):
    """What `add_fact` takes beside its draft (`new_fact` passes it on)."""

    turn_ids: tuple[int, ...]
    observation: ObservationRef | None
    supersedes: FactRef | None


@dataclass
class Working(Changeset):
    now: dt.datetime = UNREAD  # the time of the read it starts from (`of`)
    facts: dict[int, Fact] = field(default_factory=dict)
    edges: set[tuple[str, int, int]] = field(default_factory=set)
    people: dict[str, Relationship] = field(default_factory=dict)
    events: list[tuple[Ref, EventDraft]] = field(default_factory=list)  # made in this run
    user_model: dict[str, str] = field(default_factory=dict)
    trajectory: dict[str, Any] | None = None
    touched: set[int] = field(default_factory=set)  # created, supported or moved in this run
    times: dict[int, str] = field(default_factory=dict)  # turn id → when it was said
    heard_in: dict[int, list[int]] = field(default_factory=dict)  # fact → this run's turns
    heard: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # fact → (when, how)
    strategies: dict[int, Strategy] = field(default_factory=dict)  # open and asked, projected
    lapsed: dict[int, Strategy] = field(default_factory=dict)  # settled expired after our words
    waking: dict[int, list[Strategy]] = field(default_factory=dict)  # obsolete by a revived expiry
    waking_edges: dict[int, list[Edge]] = field(default_factory=dict)  # retired by one, likewise
    questioned: dict[int, Fact] = field(default_factory=dict)  # retired facts they name
    obsoleted: list[int] = field(default_factory=list)  # strategies whose fact was retired
    turns: dict[int, tuple[int, str]] = field(default_factory=dict)  # this run's: session, ts
    observed: dict[Ref, int] = field(default_factory=dict)  # new observation → its session
    anchors: set[int] = field(default_factory=set)  # the trajectory's: they mature sooner
    dormant: dict[int, Fact] = field(default_factory=dict)  # expired after this run's evidence
    promoted: dict[int, str] = field(default_factory=dict)  # fact → its latest promotion's time
    strategy_days: float = STRATEGY_DAYS  # a question unanswered this long lapses
    _new_refs: dict[int, Ref] = field(default_factory=dict, repr=False)
    _strategy_refs: dict[int, Ref] = field(default_factory=dict, repr=False)
    _said: dict[Ref, str] = field(default_factory=dict, repr=False)  # observation → said_at

    @classmethod
    def of(cls, view: ProfileView, edges: list[Edge]) -> Working:
        work = cls(base_version=view.version, now=view.now)
        work.facts = {f.id: dataclasses.replace(f) for f in view.facts}
        work.strategies = {s.id: dataclasses.replace(s) for s in view.strategies}
        work.questioned = {f.id: f for f in view.questioned}
        work.edges = {(e.kind, e.from_fact, e.to_fact) for e in edges if e.removed_at is None}
        work.people = {person_key(r.name): dataclasses.replace(r) for r in view.relationships}
        work.user_model = {u.dimension: u.value for u in view.user_model}
        work.anchors = set(view.anchors)
        if view.trajectory is not None:
            work.trajectory = view.trajectory.to_dict()
        return work

    # -- reading the projection --------------------------------------------------------------
    @property
    def stamp(self) -> str:
        return to_text(self.now)

    @property
    def present(self) -> str:
        """The conversation's present: the latest turn this run reads (else the read's time)."""
        return max(self.times.values(), default=self.stamp)

    def read(self, turns: Iterable[Turn]) -> None:
        """The turns this run reads: each one's session and own timestamp (valid time)."""
        for t in turns:
            self.turns[t.id] = (t.session_id, t.ts)
            self.times[t.id] = t.ts

    def _heard(self, observation: ObservationRef | None) -> list[str | None]:
        """When an observation of this run was said (its evidence time), as `also` for `_valid`."""
        return [self._said.get(observation) if isinstance(observation, Ref) else None]

    def add_observation(self, draft: ObservationDraft) -> Ref:
        """An observation said when its earliest turn was (its draft may say otherwise)."""
        said = draft.said_at or first_said(draft.turn_ids, self.times) or self.present
        draft = dataclasses.replace(draft, said_at=said)
        ref = super().add_observation(draft)
        self._said[ref] = said
        if draft.session_id is not None:
            self.observed[ref] = draft.session_id
        return ref

    def live(self) -> list[Fact]:
        return [f for f in self.facts.values() if f.status in ACTIVE_STATUSES]

    def live_at(self, at: str) -> list[Fact]:
        """The facts believed when `at` was said (valid time): live and not expired by then,
        so words said after a fact lapsed make a new fact rather than revive it — as they
        would had each night been slept on in turn."""
        return [f for f in self.live() if f.expires_at is None or f.expires_at > at]

    def revive_edges(self, edges: Iterable[Edge]) -> None:
        """The retired edges of revived facts that their expiry retired: live again
        (`Changeset.restore_edge`) once the fact wakes and its other fact is believed too."""
        for e in edges:
            for end in (e.from_fact, e.to_fact):
                d = self.dormant.get(end)
                if d is not None and e.removed_at is not None and e.valid_to == d.valid_to:
                    self.waking_edges.setdefault(end, []).append(e)

    def revive(self, expired: Iterable[tuple[Fact, str]]) -> None:
        """Facts an earlier run closed by expiry after this run's first words (each with the
        status it had): believed again in the projection, as they were when those words were
        said. One this run touches is reopened (`Changeset.reopen`); `rest` closes the others
        again, unchanged, writing nothing."""
        for closed, was in expired:
            self.dormant[closed.id] = closed
            self.facts[closed.id] = dataclasses.replace(closed, status=was, valid_to=None)

    def _wake(self, *facts: Fact) -> None:
        """A revived fact is about to change: its expiry is withdrawn first."""
        for f in facts:
            closed = self.dormant.pop(f.id, None)
            if closed is not None:
                super().reopen(f.id)
                raised = [
                    s.id
                    for s in self.strategies.values()
                    if (s.fact_id, s.kind, s.valid_from) == (f.id, "verify", closed.valid_to)
                ]
                for sid in raised:  # the verify question its expiry raised goes with it
                    del self.strategies[sid]
                for e in self.waking_edges.pop(f.id, []):  # its links hold again, once
                    other = e.to_fact if e.from_fact == f.id else e.from_fact  # both are believed
                    if other in self.dormant:
                        self.waking_edges.setdefault(other, []).append(e)
                    elif (o := self.facts.get(other)) is not None and o.active:
                        self.edges.add((e.kind, e.from_fact, e.to_fact))
                        super().restore_edge(e.id)
                for q in self.waking.pop(f.id, []):  # and the questions it ended stand again
                    self.strategies[q.id] = dataclasses.replace(
                        q, status="open", outcome=None, resolved_why=None, valid_to=None
                    )

    def rest(self) -> None:
        """Revived facts nothing touched, still expired as they were: closed again as stored
        (no change written); one whose life changed is reopened for the expiry step to judge."""
        for fid, closed in list(self.dormant.items()):
            f = self.facts[fid]
            if f.expires_at == closed.expires_at and closed.valid_to == closed.expires_at:
                self.facts[fid] = closed
                del self.dormant[fid]
            else:
                self._wake(f)

    def _mature(self, f: Fact) -> None:
        """The longer life the fact's evidence so far has earned, at once: a later session
        finds it believed exactly when a run of each night would have."""
        days = matured_decay(f, self.now, anchor=f.id in self.anchors)
        if days is not None:
            self.set_decay(f.id, days)

    def fact(self, fact_id: int) -> Fact | None:
        return self.facts.get(fact_id)

    def key(self, fact: FactRef) -> FactRef:
        """The changeset's reference for a projected id (a `Ref` for a fact new in this run)."""
        if isinstance(fact, int) and fact < 0:
            return self._new_refs[fact]
        return fact

    def _projected(self, fact: FactRef) -> Fact:
        fid = -fact.n if isinstance(fact, Ref) else fact
        return self.facts[fid]

    # -- facts -------------------------------------------------------------------------------
    def add_fact(
        self,
        draft: FactDraft,
        *,
        turn_ids: tuple[int, ...] = (),
        observation: ObservationRef | None = None,
        supersedes: FactRef | None = None,
    ) -> Ref:
        old = None if supersedes is None else self._projected(supersedes)
        if old is not None:
            check_live(old)
            self._wake(old)
        heard = self._heard(observation)
        start = draft.valid_from or first_said(turn_ids, self.times, heard) or self.present
        seen = max(start, last_said(turn_ids, self.times, heard) or start)
        draft = dataclasses.replace(draft, valid_from=start)
        ref = super().add_fact(
            draft,
            turn_ids=turn_ids,
            observation=observation,
            supersedes=None if old is None else self.key(old.id),
        )
        fid = -ref.n
        self._new_refs[fid] = ref
        self.facts[fid] = Fact(
            id=fid,
            subject=draft.subject,
            category=draft.category,
            value=draft.value,
            status="suspected",
            confidence=float(draft.confidence),
            source_type=draft.source_type,
            mention_count=1,
            decay_days=draft.decay_days,
            expires_at=expires_at(seen, draft.decay_days),
            valid_from=start,
            valid_to=None,
            supersedes=None if old is None else old.id,
            merged_into=None,
            last_seen_at=seen,
            rejected_why=None,
            created_at=self.stamp,
            updated_at=self.stamp,
            evidence_count=len(set(turn_ids)) or int(observation is not None),
            prior=float(draft.confidence),
        )
        self.heard_in[fid] = list(turn_ids)
        self._back(self.facts[fid], "support", turn_ids, observation)
        self.touched.add(fid)
        self._hear(fid, "said", turn_ids)
        if old is not None:
            self._hear(old.id, "contradicted", turn_ids)
            old.disputed_by.append(fid)
        return ref

    def _back(
        self,
        f: Fact,
        polarity: str,
        turn_ids: tuple[int, ...],
        observation: ObservationRef | None,
    ) -> None:
        """The fact's sessions and valid-time span with this evidence (`profile._backing`):
        this run's turns by their session and timestamp, else the observation's session."""
        said = [self.turns[t] for t in turn_ids if t in self.turns]
        sessions = {session for session, _ in said}
        if not said and isinstance(observation, Ref) and observation in self.observed:
            sessions.add(self.observed[observation])
        support = polarity == "support"
        known = set(f.session_ids if support else f.against_ids)
        fresh = sessions - known
        if support:
            f.session_ids, f.sessions = sorted(known | fresh), f.sessions + len(fresh)
            stamps = [ts for _, ts in said] or [a for a in self._heard(observation) if a]
            began = [min([ts for s, ts in said if s == new] or stamps or [""]) for new in fresh]
            f.session_starts = sorted([*f.session_starts, *(t for t in began if t)])
            if stamps:
                f.said_from = min([*stamps, *([f.said_from] if f.said_from else [])])
                f.said_to = max([*stamps, *([f.said_to] if f.said_to else [])])
        else:
            f.against_ids, f.against = sorted(known | fresh), f.against + len(fresh)

    def _hear(self, fact_id: int, how: str, turn_ids: tuple[int, ...]) -> None:
        """Remember when (valid time) and how this run heard of a fact (what answers its
        questions, `plan_strategies`)."""
        at = first_said(turn_ids, self.times) or self.present
        said = how + (f" (turn {min(turn_ids)})" if turn_ids else "")
        self.heard.setdefault(fact_id, []).append((at, said))

    def new_fact(self, draft: FactDraft, **given: Unpack[_FactEvidence]) -> int:
        """`add_fact`, returning the projected id the later steps use."""
        return -self.add_fact(draft, **given).n

    def _link(
        self,
        fact: FactRef,
        polarity: str,
        turn_ids: tuple[int, ...],
        observation: ObservationRef | None,
        seen_at: str | None,
    ) -> None:
        """`support` and `against` on the projection: evidence said when its turns (else its
        observation) were; support is one more mention, so the fact lives longer."""
        f = self._projected(fact)
        check_live(f, "gain evidence")
        self._wake(f)
        heard = self._heard(observation)
        seen = seen_at or last_said(turn_ids, self.times, heard) or self.present
        super()._link(self.key(f.id), polarity, turn_ids, observation, seen)
        self._back(f, polarity, turn_ids, observation)
        if polarity == "support":
            f.mention_count += 1
            f.evidence_count += len(set(turn_ids)) or 1
            f.last_seen_at = max(f.last_seen_at, seen)  # an older session heard late never shortens
            f.expires_at = expires_at(f.last_seen_at, f.decay_days)
            self.heard_in.setdefault(f.id, []).extend(turn_ids)
            self._mature(f)
        self.touched.add(f.id)
        self._hear(f.id, "heard again" if polarity == "support" else "doubted", turn_ids)

    def transition(
        self,
        fact: FactRef,
        to: str,
        *,
        why: str | None = None,
        at: str | None = None,
        because: Because | None = None,
    ) -> None:
        f = self._projected(fact)
        check_transition(f, to)
        self._wake(f)
        if because is not None:
            cited = self._projected(because.fact)
            because = Because(because.relation, self.key(cited.id))
        # valid time: an end given (a successor's start, an expiry), else the present; a
        # promotion when its rule was met (never before the one it follows)
        if to in FINAL:
            when = end_at(f.valid_from, at or self.present)
            self._settle_before(f, when)
        else:
            when = max(at or f.last_seen_at, self.promoted.get(f.id, ""))
            self.promoted[f.id] = when
        super().transition(self.key(f.id), to, why=why, at=when, because=because)
        f.status = to
        if to in FINAL:
            f.valid_to = when
            self._retired(f.id)
        self.touched.add(f.id)

    def _settle_before(self, f: Fact, end: str) -> None:
        """A fact's open questions judged as of its end (`plan_strategies`): one answered or
        lapsed by then stays so; the others end obsolete with it — a lapse a later run had
        written is withdrawn first, so they do."""
        mine = [
            s
            for s in self.strategies.values()
            if s.fact_id == f.id and s.kind != "verify" and s.status != "resolved"
        ]
        days = self.strategy_days  # a clarify or probe names only its own fact
        plan_strategies(mine, {f.id: f}, self.heard, from_text(end), self, days=days, ending=True)
        for s in mine:
            if s.status != "resolved" and self.lapsed.pop(s.id, None) is not None:
                super().reopen_strategy(s.id)

    def _retired(self, fact_id: int) -> None:
        """A fact left the profile: its edges go, and its clarify and probe strategies end
        obsolete (as `Profile.apply` does to the rows)."""
        self.edges = {e for e in self.edges if fact_id not in e[1:]}
        for f in self.facts.values():
            if fact_id in f.disputed_by:
                f.disputed_by = [i for i in f.disputed_by if i != fact_id]
        for s in self.strategies.values():
            if s.fact_id == fact_id and s.kind != "verify" and s.status != "resolved":
                s.status, s.outcome = "resolved", "obsolete"
                self.obsoleted.append(s.id)

    def merge(self, keep: FactRef, drop: FactRef) -> None:
        k, d = self._projected(keep), self._projected(drop)
        check_live(k, "absorb a duplicate")
        check_transition(d, "closed")
        self._wake(k, d)
        self._settle_before(d, d.last_seen_at)
        super().merge(self.key(k.id), self.key(d.id))
        k.mention_count += d.mention_count
        k.evidence_count += d.evidence_count
        k.valid_from = min(k.valid_from, d.valid_from)
        k.last_seen_at = max(k.last_seen_at, d.last_seen_at)
        k.expires_at = expires_at(k.last_seen_at, k.decay_days)
        for side in ("session_ids", "against_ids"):
            mine, theirs = set(getattr(k, side)), set(getattr(d, side))
            count = "sessions" if side == "session_ids" else "against"
            setattr(k, count, getattr(k, count) + len(theirs - mine))
            setattr(k, side, sorted(mine | theirs))
        said = [x for x in (k.said_from, k.said_to, d.said_from, d.said_to) if x]
        k.said_from, k.said_to = (min(said), max(said)) if said else (None, None)
        d.status, d.merged_into, d.valid_to = "closed", k.id, d.last_seen_at
        self._retired(d.id)

    def set_decay(self, fact: FactRef, decay_days: int) -> None:
        f = self._projected(fact)
        self._wake(f)
        super().set_decay(self.key(f.id), decay_days)
        f.decay_days = decay_days
        f.expires_at = expires_at(f.last_seen_at, decay_days)

    # -- graph, strategies, people, events, portrait -----------------------------------------
    def add_edge(
        self, kind: str, from_fact: FactRef, to_fact: FactRef, valid_from: str | None = None
    ) -> None:
        a, b = self._projected(from_fact), self._projected(to_fact)
        for f in (a, b):
            check_live(f, "join the knowledge graph")
        if (kind, a.id, b.id) in self.edges:
            return
        self._wake(a, b)
        since = valid_from or max(a.valid_from, b.valid_from)
        super().add_edge(kind, self.key(a.id), self.key(b.id), since)
        self.edges.add((kind, a.id, b.id))

    def add_strategy(
        self, kind: str, fact: FactRef | None, question: str, valid_from: str | None = None
    ) -> Ref:
        f = None if fact is None else self._projected(fact)
        if f is not None:
            self._wake(f)
        arose = valid_from or (question_time(kind, f) if f else self.present)
        ref = super().add_strategy(kind, None if f is None else self.key(f.id), question, arose)
        sid = -ref.n  # projected, so the expiry step settles this run's own questions too
        self._strategy_refs[sid] = ref
        self.strategies[sid] = Strategy(
            id=sid,
            kind=kind,
            fact_id=None if f is None else f.id,
            question=question,
            status="open",
            created_at=self.stamp,
            updated_at=self.stamp,
            valid_from=arose,
        )
        return ref

    def reconsider(self, settled: Iterable[Strategy]) -> None:
        """Strategies a rule settled after this run's first words: a lapsed one stands open
        again in the projection (`resolve_strategy` writes nothing when it lapses as it did);
        one a revived fact's expiry made obsolete stands open again once that fact wakes."""
        for s in settled:
            fact = self.dormant.get(s.fact_id) if s.fact_id is not None else None
            if s.outcome == "expired":
                self.lapsed[s.id] = s
                self.strategies[s.id] = dataclasses.replace(
                    s, status="open", outcome=None, resolved_why=None, valid_to=None
                )
            elif fact is not None and s.kind != "verify" and s.valid_to == fact.valid_to:
                self.waking.setdefault(fact.id, []).append(s)

    def resolve_strategy(
        self,
        strategy_id: int | Ref,
        outcome: str,
        why: str,
        *,
        because: Because | None = None,
        at: str | None = None,
    ) -> None:
        assert isinstance(strategy_id, int)  # the projection's ids
        s = self.strategies[strategy_id]
        s.status, s.outcome = "resolved", outcome
        stored = self.lapsed.pop(strategy_id, None)
        if stored is not None:
            if (outcome, at) == (stored.outcome, stored.valid_to):
                return  # settled as it was
            super().reopen_strategy(strategy_id)
        if because is not None:
            because = Because(because.relation, self.key(self._projected(because.fact).id))
        key = self._strategy_refs.get(strategy_id, strategy_id)
        super().resolve_strategy(key, outcome, why, because=because, at=at)

    def asked_about(self) -> dict[int, Fact]:
        """Every fact a projected strategy may name: the live and new ones, and the retired ones
        a verify asks after."""
        return {**self.questioned, **self.facts}

    def mention(self, person: PersonMention) -> None:
        person = dataclasses.replace(person, said_at=person.said_at or self.present)
        super().mention(person)
        key = person_key(person.name)
        self.people[key] = merge_mention(
            self.people.get(key), person, person.said_at or self.present, self.stamp
        )

    def add_event(self, draft: EventDraft) -> Ref:
        start = draft.valid_from or draft.said_at or self.present
        draft = dataclasses.replace(draft, valid_from=start, said_at=draft.said_at or start)
        ref = super().add_event(draft)
        self.events.append((ref, draft))
        return ref

    def set_user_model(
        self,
        dimension: str,
        value: str,
        evidence: tuple[int, ...] = (),
        valid_at: str | None = None,
    ) -> None:
        super().set_user_model(dimension, value, evidence, valid_at or self.present)
        self.user_model[dimension] = value

    def set_trajectory(
        self, valid_at: str | None = None, **fields: Unpack[TrajectoryFields]
    ) -> None:
        anchors = [self.key(a) for a in fields.get("anchors", []) if a in self.facts]
        given: TrajectoryFields = {**fields, "anchors": anchors}
        super().set_trajectory(valid_at or self.present, **given)
        self.trajectory = {
            **fields,
            "anchors": [a for a in fields.get("anchors", []) if a in self.facts],
        }
