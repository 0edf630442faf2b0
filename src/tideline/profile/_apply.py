"""Writing a changeset: resolve refs, enforce the lifecycle, call the owners. No SQL here.

Runs inside the single write transaction `Profile.apply` opens; any exception rolls back every
change of the changeset.

Two clocks: record time is the apply time (`now`); valid time comes with each change. A change
that does not say its valid time (a hand-made changeset) gets it from its evidence turns' own
timestamps (`_valid`), else from the apply time — the pipeline always says it, so what it
compared with while computing is what is stored.
"""

from __future__ import annotations

import dataclasses as dc
import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tideline.clock import to_text
from tideline.errors import NotFound
from tideline.profile import _changeset as c
from tideline.profile._backing import TurnInfo, backing, confidence
from tideline.profile._decay import expires_at
from tideline.profile._digests import DigestStore
from tideline.profile._edges import EdgeStore
from tideline.profile._events import EventStore
from tideline.profile._fact_index import FactIndex
from tideline.profile._facts import FactStore
from tideline.profile._lifecycle import check_live, check_strategy, check_transition
from tideline.profile._mentions import merge_mention, person_key
from tideline.profile._observations import ObservationStore
from tideline.profile._people import RelationshipStore
from tideline.profile._plans import event_expiry
from tideline.profile._portrait import PortraitStore
from tideline.profile._records import ACTIVE_STATUSES, FINAL_STATUSES, Fact
from tideline.profile._sleep_runs import RunStore
from tideline.profile._snapshot import ProfileState, render_snapshot
from tideline.profile._strategies import StrategyStore, retired_why
from tideline.profile._valid import end_at, first_said, last_said, question_time
from tideline.store import Storage

_PLACEHOLDER = re.compile(r"(\[|#|\bfacts? )-(\d{1,18})\b", re.IGNORECASE)
TurnCheck = Callable[[Sequence[int]], object]  # raises NotFound for an unknown turn id
TurnInfoOf = Callable[[Sequence[int]], TurnInfo]  # each turn's session and valid time


@dataclass
class Applied:
    """What a changeset did: the new profile version, ids of its new rows, counts by change."""

    version: int
    ids: dict[c.Ref, int] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "ids": {f"{r.kind}:{r.n}": i for r, i in self.ids.items()},
            "counts": dict(self.counts),
        }


class Stores:
    """Every owner of a profile table, over one database."""

    def __init__(self, db: Storage):
        self.facts = FactStore(db)
        self.observations = ObservationStore(db)
        self.people = RelationshipStore(db)
        self.events = EventStore(db)
        self.edges = EdgeStore(db)
        self.strategies = StrategyStore(db)
        self.portrait = PortraitStore(db)
        self.runs = RunStore(db)
        self.digests = DigestStore(db)
        self.fact_index = FactIndex(db)


class Applier:
    def __init__(
        self,
        stores: Stores,
        now: dt.datetime,
        run_id: int | None,
        check_turns: TurnCheck | None,
        dream_run_id: int | None = None,
        turn_info: TurnInfoOf | None = None,
    ):
        self.s = stores
        self.dream_run_id = dream_run_id
        self.turn_info = turn_info
        self.at = now
        self.now = to_text(now)
        self.run_id = run_id
        self.check_turns = check_turns
        self.ids: dict[c.Ref, int] = {}
        self.counts: Counter[str] = Counter()

    # -- refs --------------------------------------------------------------------------------
    def _id(self, ref: int | c.Ref) -> int:
        if isinstance(ref, c.Ref):
            if ref not in self.ids:
                raise NotFound(f"{ref.kind} ref {ref.n} is used before it is created")
            return self.ids[ref]
        return ref

    def _fact(self, ref: int | c.Ref) -> Fact:
        return self.s.facts.require(self._id(ref))

    def _observation(self, ref: int | c.Ref | None) -> int | None:
        if ref is None:
            return None
        oid = self._id(ref)
        if not self.s.observations.exists(oid):
            raise NotFound(f"observation #{oid} does not exist")
        return oid

    def _resolve(self, value: Any, *, words: bool = False) -> Any:
        """A JSON value with every `Ref` replaced by the id it got in this transaction; with
        `words` (a model's texts, not the user's values), its texts' placeholder ids too."""
        if isinstance(value, c.Ref):
            return self._id(value)
        if isinstance(value, str):
            return self._named(value) if words else value
        if isinstance(value, dict):
            return {k: self._resolve(v, words=words) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._resolve(v, words=words) for v in value]
        return value

    def _why(self, op: c.Transition | c.StrategyStatus) -> str | None:
        """The reason as stored: a cited fact by the id it has in this transaction."""
        why = None if op.why is None else self._named(op.why)
        if op.because is None:
            return why
        cited = f"{op.because.relation} #{self._id(op.because.fact)}"
        return f"{cited}: {why}" if why else cited

    def _named(self, text: str) -> str:
        """A model's words with the placeholder ids it was shown for this run's new facts
        (`[-3]`, `#-3`, `fact -3`) given the ids those facts got; an unknown one is left."""

        def real(m: re.Match[str]) -> str:
            fid = self.ids.get(c.Ref("fact", int(m[2])))
            return m[0] if fid is None else f"{m[1]}{fid}"

        return _PLACEHOLDER.sub(real, text)

    def _state(self) -> ProfileState:
        """The profile as the changes so far left it, inside the transaction."""
        s = self.s
        facts = s.facts.list(ACTIVE_STATUSES)
        challengers = s.facts.challengers()
        for f in facts:
            f.disputed_by = challengers.get(f.id, [])
        return ProfileState(
            now=self.at,
            facts=facts,
            people=s.people.list(),
            events=s.events.list(active=True, now=self.now),
            user_model=s.portrait.user_model(),
            edges=s.edges.list(live=True),
            trajectory=s.portrait.trajectory(),
        )

    def _turns(self, turn_ids: Sequence[int]) -> None:
        if turn_ids and self.check_turns is not None:
            self.check_turns(turn_ids)

    def _times(self, turn_ids: Sequence[int]) -> dict[int, str]:
        """When each of these turns was said (their own timestamps)."""
        if not turn_ids or self.turn_info is None:
            return {}
        return {t: ts for t, (_, ts) in self.turn_info(turn_ids).items()}

    def _said(self, observation: int | None) -> str | None:
        return None if observation is None else self.s.observations.said_at(observation)

    # -- the changes -------------------------------------------------------------------------
    def run(self, ops: Sequence[c.Op]) -> None:
        for op in ops:
            self.apply(op)
            self.counts[type(op).__name__] += 1

    def apply(self, op: c.Op) -> None:
        """One change, by kind."""
        match op:
            case c.NewFact():
                self._new_fact(op)
            case c.Link():
                self._link(op)
            case c.Transition():
                self._transition(self._fact(op.fact), op.to, self._why(op), op.at)
            case c.Succession():
                old, new = self._fact(op.fact), self._fact(op.successor)
                check_live(new, "succeed a fact")
                self.s.facts.succeed(old, new, self.now)
            case c.Reopen():
                fact = self._fact(op.fact)
                self.s.facts.reopen(fact, self.now)
                if fact.valid_to is not None:
                    self.s.strategies.withdraw_expiry(fact.id, fact.valid_to, self.now)
            case c.Merge():
                self._merge(op)
            case c.SetDecay():
                fact = self._fact(op.fact)
                ends = expires_at(fact.last_seen_at, op.decay_days)
                self.s.facts.set_decay(fact.id, op.decay_days, ends, self.now)
            case c.SetConfidence():
                self.s.facts.set_confidence(self._fact(op.fact).id, op.confidence, self.now)
            case c.NewObservation():
                turns = op.draft.turn_ids
                self._turns(turns)
                said = op.draft.said_at or first_said(turns, self._times(turns)) or self.now
                oid = self.s.observations.insert(
                    op.draft, said_at=said, now=self.now, run_id=self.run_id
                )
                self.ids[op.ref] = oid
            case c.ObservationsProcessed():
                self.s.observations.mark_processed([self._id(o) for o in op.observations])
            case c.Mention():
                key = person_key(op.person.name)
                at = op.person.said_at or self.now
                merged = merge_mention(self.s.people.find(key), op.person, at, self.now)
                self.s.people.save(merged, key)
            case c.NewEvent():
                start = op.draft.valid_from or op.draft.said_at or self.now
                self.ids[op.ref] = self.s.events.insert(
                    op.draft,
                    valid_from=start,
                    expires_at=event_expiry(dc.replace(op.draft, valid_from=start)),
                    now=self.now,
                    run_id=self.run_id,
                )
            case c.CloseEvent():
                self.s.events.close(self._id(op.event_id), at=op.at or self.now, now=self.now)
            case c.NewEdge():
                a, b = self._fact(op.from_fact), self._fact(op.to_fact)
                for f in (a, b):
                    check_live(f, "join the knowledge graph")
                since = op.valid_from or max(a.valid_from, b.valid_from)
                self.s.edges.add(
                    op.kind, a.id, b.id, valid_from=since, now=self.now, run_id=self.run_id
                )
            case c.RestoreEdge():
                self.s.edges.hold_again(op.edge_id)
            case c.NewStrategy():
                about = None if op.fact is None else self._fact(op.fact)
                arose = op.valid_from or (question_time(op.kind, about) if about else self.now)
                self.ids[op.ref] = self.s.strategies.add(
                    op.kind,
                    None if about is None else about.id,
                    self._named(op.question),  # the model's words
                    valid_from=arose,
                    now=self.now,
                    run_id=self.run_id,
                    dream_run_id=self.dream_run_id,
                )
            case c.ReopenStrategy():
                self.s.strategies.reopen(self.s.strategies.require(op.strategy_id), self.now)
            case c.StrategyStatus():
                sid = self._id(op.strategy_id)
                check_strategy(self.s.strategies.require(sid), op.to)
                self.s.strategies.set_status(
                    sid,
                    op.to,
                    self.now,
                    outcome=op.outcome,
                    why=self._why(op),
                    at=op.at,
                )
            case c.UserModel():
                self.s.portrait.set_dimension(
                    op.dimension,
                    self._named(op.value),  # the user-model step's words
                    list(op.evidence),
                    valid_at=op.valid_at or self.now,
                    now=self.now,
                    run_id=self.run_id,
                )
            case c.NewTrajectory():
                fields = self._resolve(op.fields, words=True)  # the trajectory step's words
                self.s.portrait.add_trajectory(
                    fields, valid_at=op.valid_at or self.now, now=self.now, run_id=self.run_id
                )
            case c.NewSnapshot():
                data = self._resolve(op.data)
                self.s.portrait.add_snapshot(
                    op.text, data, valid_at=op.valid_at or self.now, now=self.now,
                    run_id=self.run_id,
                )  # fmt: skip
            case c.RebuildSnapshot():
                text, data = render_snapshot(self._state())
                self.s.portrait.add_snapshot(
                    text, data, valid_at=op.valid_at or self.now, now=self.now,
                    run_id=self.run_id,
                )  # fmt: skip
            case c.Digest():
                self.s.digests.add(
                    op.session_id,
                    op.through_turn_id,
                    summary=op.summary,
                    tags=list(op.tags),
                    skipped=op.skipped,
                    valid_from=op.valid_from,
                    valid_to=op.valid_to,
                    now=self.now,
                    run_id=self.run_id,
                )
            case c.SessionProcessed():
                self.s.runs.mark_processed(
                    op.session_id, op.through_turn_id, now=self.now, run_id=self.run_id
                )

    def _new_fact(self, op: c.NewFact) -> None:
        old = None if op.supersedes is None else self._fact(op.supersedes)
        if old is not None:
            check_live(old)
        self._turns(op.turn_ids)
        obs = self._observation(op.observation)
        times, said = self._times(op.turn_ids), [self._said(obs)]
        start = op.draft.valid_from or first_said(op.turn_ids, times, said) or self.now
        seen = max(start, last_said(op.turn_ids, times, said) or start)
        fid = self.s.facts.insert(
            op.draft,
            now=self.now,
            valid_from=start,
            last_seen_at=seen,
            expires_at=expires_at(seen, op.draft.decay_days),
            supersedes=None if old is None else old.id,
            run_id=self.run_id,
        )
        self.ids[op.ref] = fid
        self._evidence(fid, "support", op.turn_ids, obs, times, start)
        self._reweigh(fid)

    def _link(self, op: c.Link) -> None:
        fact = self._fact(op.fact)
        check_live(fact, "gain evidence")
        self._turns(op.turn_ids)
        obs = self._observation(op.observation)
        times = self._times(op.turn_ids)
        seen = op.seen_at or last_said(op.turn_ids, times, [self._said(obs)]) or self.now
        added = self._evidence(fact.id, op.polarity, op.turn_ids, obs, times, seen)
        if op.polarity == "support" and added:
            last = max(fact.last_seen_at, seen)  # a session heard out of order never shortens
            ends = expires_at(last, fact.decay_days)
            self.s.facts.mention(fact.id, seen_at=last, expires_at=ends, now=self.now)
        if added:
            self._reweigh(fact.id)

    def _reweigh(self, fact_id: int) -> None:
        """The fact's confidence from all its evidence now (`_backing.confidence`)."""
        fact = self.s.facts.require(fact_id)
        rows = self.s.facts.links([fact_id])[fact_id]
        turns = [x[0] for x in rows if x[0] is not None]
        info = self.turn_info(turns) if self.turn_info is not None and turns else {}
        observed = [x[1] for x in rows if x[1] is not None]
        b = backing(rows, info, self.s.observations.sessions(observed))
        prior = fact.confidence if fact.prior is None else fact.prior
        value = confidence(prior, b.sessions, b.against)
        if value != fact.confidence:
            self.s.facts.set_confidence(fact_id, value, self.now)

    def _evidence(
        self,
        fact_id: int,
        polarity: str,
        turn_ids: Sequence[int],
        observation: int | None,
        times: dict[int, str],
        said: str,
    ) -> int:
        links: list[tuple[int | None, int | None]] = [(t, observation) for t in turn_ids]
        if not links and observation is not None:
            links = [(None, observation)]
        return sum(
            self.s.facts.add_evidence(
                fact_id,
                turn_id=t,
                observation_id=o,
                polarity=polarity,
                said_at=times.get(t or 0, said),
                now=self.now,
            )
            for t, o in links
        )

    def _transition(
        self, fact: Fact, to: str, why: str | None, at: str | None, merged_into: int | None = None
    ) -> None:
        """`at` is valid time; without it a final change ends the fact now (a person's close),
        and a promotion happens when its latest evidence was said."""
        check_transition(fact, to)
        final = to in FINAL_STATUSES
        when = end_at(fact.valid_from, at or self.now) if final else at or fact.last_seen_at
        self.s.facts.set_status(
            fact, to, now=self.now, at=when, why=why, run_id=self.run_id, merged_into=merged_into
        )
        if final:
            self.s.edges.remove_for(fact.id, at=when, now=self.now)
            gone = retired_why(fact.id, to, why)
            self.counts["StrategyObsolete"] += self.s.strategies.obsolete_for(
                [fact.id], gone, self.now, at=when
            )

    def _merge(self, op: c.Merge) -> None:
        keep, drop = self._fact(op.keep), self._fact(op.drop)
        check_live(keep, "absorb a duplicate")
        for ev in self.s.facts.evidence([drop.id])[drop.id]:
            self.s.facts.add_evidence(
                keep.id,
                turn_id=ev.turn_id,
                observation_id=ev.observation_id,
                polarity=ev.polarity,
                said_at=ev.said_at,
                now=self.now,
            )
        seen = max(keep.last_seen_at, drop.last_seen_at)  # the stored form sorts as text
        self.s.facts.mention(
            keep.id,
            seen_at=seen,
            expires_at=expires_at(seen, keep.decay_days),
            now=self.now,
            count=drop.mention_count,
        )
        self.s.facts.set_valid_from(keep.id, drop.valid_from, self.now)  # heard first as `drop`
        self._reweigh(keep.id)
        self._transition(
            drop, "closed", f"duplicate of #{keep.id}", drop.last_seen_at, merged_into=keep.id
        )
