"""Phase two, analysis (seed steps 3 and 4): inferred facts, then every observation integrated.

Step 3 infers behaviour patterns from this run's observations about the user (source_type
`inferred`); one backed by 3 or more observations gets a `clarify` strategy.

Step 4 classifies each observation against the profile, in batches, in the order the user said
them (valid time: the turns' own timestamps, the date shown on each), so sessions digested in the
same run can contradict one another. Each batch is shown the facts believed when its first
observation was said, and an observation can only speak of a fact still believed when it was
said (an expired one is not revived: the words make a new fact, as a run each night would): a decision may name, instead of a fact id, an `earlier`
observation of the same list whose fact has no id yet (facts of earlier batches show with their
placeholder ids):
- support → evidence linked, mention_count + 1 (and the fact's life restarts);
- contradict → a new fact that `supersedes` the old one: a disputed pair for step 6;
- evidence_against → evidence linked with polarity `against`;
- new → a new suspected fact.
An observation of type statement or contradiction that the model left out becomes `new` (the
seed's rule). A "new" fact equal to a live one (same subject, category and value after
normalising) supports it instead, so reruns and repeated statements never duplicate facts.
New and contradicting facts get a `probe` strategy. Every observation is then marked processed.
"""

from __future__ import annotations

from typing import TypedDict

from tideline.consolidate._prompts import fact_line, trajectory_text
from tideline.consolidate._schemas import Behaviour, Classification, Decision
from tideline.consolidate._sleep_context import OBSERVATIONS_PER_CALL, Ctx, Heard, fit, section
from tideline.profile import DEFAULT_DECAY_DAYS, Fact, FactDraft, Ref, normalise
from tideline.runs import Outcome

CLARIFY_EVIDENCE = 3  # seed step 3: a clarify strategy once an inferred fact has 3+ evidence
AUTO_NEW = ("statement", "contradiction")


class _Cited(TypedDict):
    """The evidence an observation lends a fact: its turns and the observation itself."""

    turn_ids: tuple[int, ...]
    observation: Ref


def probe_question(fact: Fact) -> str:
    who = "you" if fact.subject == "user" else fact.subject
    return f"Is this new for {who}, and is it settled? {fact.category}: {fact.value}"


def clarify_question(fact: Fact) -> str:
    return f"I have the impression that {fact.category}: {fact.value} — is that right?"


def _find(ctx: Ctx, subject: str, category: str, value: str, at: str) -> Fact | None:
    """The fact saying the same that was believed when `at` was said (valid time)."""
    key = (normalise(subject), normalise(category), normalise(value))
    for f in ctx.work.live_at(at):
        if (normalise(f.subject), normalise(f.category), normalise(f.value)) == key:
            return f
    return None


def _observations(ctx: Ctx, heard: list[Heard]) -> list[str]:
    """Each observation numbered in the order they were said (valid time), with the day it was
    said and the user's own words behind it (its turns, dated and cut: `Ctx.observation_words`)."""
    out = []
    for n, h in enumerate(heard, 1):
        d = h.draft
        line = f"{n}. [{h.said_at[:10]}] ({d.type}, {d.topic or '-'}, about {d.about}) {d.text}"
        out.append("\n    ".join([line, *ctx.observation_words(d)]))
    return out


def _profile_block(ctx: Ctx, share: float, at: str) -> str:
    """The facts believed when `at` was said, and the trajectory."""
    facts = fit([fact_line(f) for f in ctx.work.live_at(at)], ctx.room(share))
    return "\n\n".join(
        [
            section("Profile facts", facts),
            section("Trajectory", trajectory_text(ctx.work)),
        ]
    )


# -- step 3 ---------------------------------------------------------------------------------
def behaviour(ctx: Ctx) -> Outcome:
    """Step 3: behaviour patterns inferred from observations, profile and trajectory."""
    about_user = [h for h in ctx.heard if h.draft.about == "user"]
    if not about_user:
        return Outcome(note="no new observations about the user")
    body = fit(_observations(ctx, about_user), ctx.room(0.4))
    user = _profile_block(ctx, 0.2, about_user[0].said_at) + "\n\n" + section("Observations", body)
    answer = ctx.ask("behaviour", user, Behaviour)
    counts = {"inferred": 0, "supported": 0, "clarify": 0}
    for item in answer.facts:
        cited = [
            about_user[i - 1] for i in dict.fromkeys(item.observations) if 0 < i <= len(about_user)
        ]
        if not cited:
            continue
        turns = tuple(dict.fromkeys(t for h in cited for t in h.draft.turn_ids))
        # a pattern exists once its last cited observation was said, not at its first
        seen = max(h.said_at for h in cited)
        known = _find(ctx, "user", item.category, item.value, seen)
        if known is not None:
            ctx.work.support(known.id, turn_ids=turns, observation=cited[0].ref)
            counts["supported"] += 1
            continue
        draft = FactDraft(
            "user", item.category, item.value, "inferred", item.confidence, valid_from=seen or None
        )
        fid = ctx.work.new_fact(draft, turn_ids=turns, observation=cited[0].ref)
        ctx.said[fid] = [h.draft.text for h in cited]
        counts["inferred"] += 1
        if len(cited) >= CLARIFY_EVIDENCE:
            fact = ctx.work.facts[fid]
            ctx.work.add_strategy("clarify", fid, item.question.strip() or clarify_question(fact))
            counts["clarify"] += 1
    return Outcome(counts)


# -- step 4 ---------------------------------------------------------------------------------
def classify(ctx: Ctx) -> Outcome:
    """Step 4: classify every observation against the profile and integrate it."""
    counts = {"support": 0, "contradict": 0, "evidence_against": 0, "new": 0, "probe": 0}
    if not ctx.heard:
        return Outcome(counts, "no new observations")
    start = 0
    while start < len(ctx.heard):
        # as many observations (each with its words) as fit in their share, up to OBSERVATIONS_PER_CALL
        lines = fit(
            _observations(ctx, ctx.heard[start : start + OBSERVATIONS_PER_CALL]), ctx.room(0.4)
        )
        batch = ctx.heard[start : start + max(1, len(lines))]
        start += len(batch)
        body = "\n".join(lines or _observations(ctx, batch))
        user = _profile_block(ctx, 0.35, batch[0].said_at) + "\n\n" + f"## Observations\n{body}"
        answer = ctx.ask("classify", user, Classification)
        decided: dict[int, Decision] = {}
        for given in answer.decisions:
            if 0 < given.observation <= len(batch):
                decided.setdefault(given.observation - 1, given)
        made: dict[int, int] = {}  # observation (0-based) → the fact it became or spoke of
        for i, heard in enumerate(batch):
            d = decided.get(i)
            earlier = made.get(d.earlier - 1) if d and d.earlier and d.earlier <= i else None
            action, fact = _integrate(ctx, heard, d, earlier)
            if fact is not None:
                made[i] = fact
            if action:
                counts[action] += 1
                counts["probe"] += action in ("new", "contradict")
    ctx.work.observations_processed([h.ref for h in ctx.heard])
    return Outcome(counts)


def decay_days(d: Decision | None, default: int | None) -> int | None:
    """The fact's life as the model gave it: a number of days, `null` for never (an origin, a
    native language), or — when it said nothing — `default`."""
    if d is None or "decay_days" not in d.model_fields_set:
        return default
    return d.decay_days


def _live(ctx: Ctx, fact_id: int | None, at: str) -> Fact | None:
    """The fact, if it was believed when `at` was said (not yet expired then)."""
    f = None if fact_id is None else ctx.work.fact(fact_id)
    if f is None or not f.active or (f.expires_at is not None and f.expires_at <= at):
        return None
    return f


def _integrate(
    ctx: Ctx, h: Heard, d: Decision | None, earlier: int | None = None
) -> tuple[str | None, int | None]:
    """One observation into the profile: the action taken (None: kept as observation) and the
    fact it became or spoke of. The fact may be named by id, or — made moments ago from an
    earlier observation of the same list, so without an id the model could know — by that
    observation (`earlier`): how one run holds "researching adoption" in May, then "applied"
    in June as a change, not as two facts side by side."""
    evidence: _Cited = {"turn_ids": h.draft.turn_ids, "observation": h.ref}
    at = h.said_at
    target = (_live(ctx, d.fact_id, at) or _live(ctx, earlier, at)) if d else None
    if d and d.action == "support" and target:
        ctx.work.support(target.id, **evidence)
        return "support", target.id
    if d and d.action == "evidence_against" and target:
        ctx.work.against(target.id, **evidence)
        return "evidence_against", target.id
    if d and d.action == "contradict" and target:
        subject = d.subject.strip() or target.subject
        category = d.category.strip() or target.category
        value = d.value.strip() or h.draft.text
        if _find(ctx, subject, category, value, at) is None:
            draft = FactDraft(
                subject,
                category,
                value,
                confidence=d.confidence,
                decay_days=decay_days(d, target.decay_days),
            )
            fid = ctx.work.new_fact(draft, supersedes=target.id, **evidence)
            ctx.said[fid] = [h.draft.text]
            ctx.contradicted.append(fid)
            ctx.work.add_strategy("probe", fid, probe_question(ctx.work.facts[fid]))
            return "contradict", fid
    if d is None and h.draft.type not in AUTO_NEW:
        return None, None
    subject = (d.subject.strip() if d else "") or h.draft.about
    category = (d.category.strip() if d else "") or h.draft.topic or "general"
    value = (d.value.strip() if d else "") or h.draft.text
    known = _find(ctx, subject, category, value, at)
    if known is not None:
        ctx.work.support(known.id, **evidence)
        return "support", known.id
    draft = FactDraft(
        subject,
        category,
        value,
        confidence=d.confidence if d else 0.5,
        decay_days=decay_days(d, DEFAULT_DECAY_DAYS),
    )
    fid = ctx.work.new_fact(draft, **evidence)
    ctx.said[fid] = [h.draft.text]
    ctx.work.add_strategy("probe", fid, probe_question(ctx.work.facts[fid]))
    return "new", fid
