"""What injection takes from the profile: the snapshot (T0), the facts and their themes (T3), the
facts a message touches and their neighbours in the knowledge graph (T1p), and the open
questions Sleep left for the agent to ask (T1q).

- Weights are the profile's own (`injection_weight`): full for most of a fact's life, fading to
  0.3 in its last quarter, 0 once expired — so a fact near expiry is kept after a fresh one when
  the budget is short.
- T1p: the facts the message's search finds (`Profile.fact_hits`: the one retrieval path and
  relevance floor of every search; lexical when there is no query vector), then the facts one
  `graph_edges` edge away from them, heaviest first: "poor sleep" pulls in "long night shifts"
  (causes).
- T1q: open strategies whose fact this turn touched (matched or linked, in that order), then —
  for facts no longer live, such as the expired fact of a verify strategy — those whose fact the
  same search finds relevant to the message. Unrelated questions are never offered: the seed asks for
  "a question in the next related conversation". The provider marks what it shows `asked`.

Reads only, through `Profile`'s methods; the one write (marking questions asked) is the
provider's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np

from tideline.inject._block import Item, Part, Section, Tier
from tideline.inject._config import InjectConfig
from tideline.profile import Edge, Fact, Profile, injection_weight

SYMMETRIC = ("related_to", "contradicts")


def fact_item(fact: Fact, weight: float, extra: str = "") -> Item:
    """`[f:12 2026-05-01 w=1.00 confirmed] user · city: Osaka`."""
    return Item(
        f"f:{fact.id}",
        fact.value,
        fact.last_seen_at,
        round(weight, 2),
        label=f"{fact.subject} · {fact.category}",
        extra=" ".join(x for x in (fact.status, extra) if x),
    )


def _subject_rank(subject: str) -> tuple[int, str]:
    return ({"user": 0, "self": 1}.get(subject, 2), subject.casefold())


# -- T0 ----------------------------------------------------------------------------------------
def snapshot_part(profile: Profile, config: InjectConfig, notes: list[str]) -> Part | None:
    """The snapshot Sleep's step 13 wrote, capped at `t0_snapshot_tokens` (its lightest facts and
    last sections are what a cut loses: the text lists facts heaviest first)."""
    if not config.t0_snapshot_tokens:
        return None
    snap = profile.snapshot()
    if snap is None:
        notes.append("T0: the profile has no snapshot; a Sleep run writes one")
        return None
    item = Item(f"snapshot:{snap.id}", snap.text, snap.made_at, cap=config.t0_snapshot_tokens)
    return Part("what I know (the profile's latest snapshot)", [item], noun="snapshot")


# -- T3 ----------------------------------------------------------------------------------------
def profile_parts(profile: Profile, config: InjectConfig, notes: list[str]) -> list[Part]:
    """The live facts, heaviest first while they fit, shown by subject and category; then the
    themes Sleep found among them."""
    if not config.t3_facts:
        return []
    active = profile.active()
    if not active:
        notes.append("T3: the profile holds no live facts; Sleep forms them from conversations")
        return []
    shown = active[: config.t3_facts]
    items = [fact_item(a.fact, a.weight) for a in shown]
    display = sorted(
        range(len(shown)),
        key=lambda i: (
            _subject_rank(shown[i].fact.subject),
            shown[i].fact.category.casefold(),
            -shown[i].weight,
        ),
    )
    for position, i in enumerate(display):
        items[i].order = position
    title = (
        f"what I understand ({len(shown)} of {len(active)} live facts, heaviest kept; "
        "by subject and category)"
    )
    parts = [Part(title, items, sort=True, noun="facts")]
    themes = profile.themes()
    if themes:
        rows = [
            Item(f"theme:{n}", t.label, t.built_at, extra=f"n={t.size}")
            for n, t in enumerate(themes, 1)
        ]
        parts.append(Part("themes of the profile, largest first", rows, noun="themes"))
    return parts


# -- T1p ---------------------------------------------------------------------------------------
def t1p_profile_bridge(
    profile: Profile, config: InjectConfig, message: str, qvec: np.ndarray | None
) -> Tier:
    if not message.strip() or not config.facts_k:
        return Tier(None)
    now = profile.clock()
    found = profile.fact_hits(message, qvec, config.facts_k)  # retrieve and its relevance floor
    hits = [(fact, hit) for fact, hit in found if hit.score >= config.min_score]  # unasked: more
    matched = [
        (fact, weight, f"relevance {hit.score:.2f}")
        for fact, hit in hits
        if (weight := injection_weight(fact, now)) > 0  # expired, not yet closed by Sleep
    ]
    if not matched:
        why = "expired" if hits else f"relevance < {config.min_score:.2f}"
        return Tier(None, [f"T1p: no profile fact is relevant ({why})"])
    linked = _linked(profile, config, [f for f, _, _ in matched], now)
    parts = [
        Part(
            "facts this message touches",
            [fact_item(f, w, why) for f, w, why in matched],
            noun="facts",
        )
    ]
    if linked:
        kinds = ", ".join(config.graph_edges)
        parts.append(
            Part(
                f"linked to them in the knowledge graph ({kinds})",
                [fact_item(f, w, why) for f, w, why in linked],
                noun="facts",
            )
        )
    ids = [f.id for f, _, _ in matched] + [f.id for f, _, _ in linked]
    section = Section("T1p", "what I understand about this", parts)
    return Tier(section, facts=ids)


def _linked(
    profile: Profile, config: InjectConfig, matched: Sequence[Fact], now: dt.datetime
) -> list[tuple[Fact, float, str]]:
    """Live facts one followed edge away from the matched ones: nearest match first, then
    heaviest, at most `graph_k`."""
    if not config.graph_k or not config.graph_edges:
        return []
    seen = {f.id for f in matched}
    found: list[tuple[int, Fact, float, str]] = []
    for rank, fact in enumerate(matched):
        for edge in profile.edges(fact_id=fact.id):
            other = edge.to_fact if edge.from_fact == fact.id else edge.from_fact
            if edge.kind not in config.graph_edges or other in seen:
                continue
            seen.add(other)
            neighbour = profile.fact(other, evidence=False)
            weight = injection_weight(neighbour, now)
            if weight > 0:
                found.append((rank, neighbour, weight, _relation(edge, fact.id)))
    found.sort(key=lambda x: (x[0], -x[2], x[1].id))
    return [(f, w, why) for _, f, w, why in found[: config.graph_k]]


def _relation(edge: Edge, matched_id: int) -> str:
    """How the pulled-in fact relates to the matched one, read from the pulled-in fact."""
    verb = edge.kind.replace("_", " ")
    if edge.kind in SYMMETRIC or edge.to_fact == matched_id:
        return f"{verb} f:{matched_id}"  # this → matched: "causes f:3"
    return f"f:{matched_id} {verb} this"  # matched → this: "f:3 causes this"


# -- T1q ---------------------------------------------------------------------------------------
def t1q_questions(
    profile: Profile,
    config: InjectConfig,
    message: str,
    fact_ids: Sequence[int],
    qvec: np.ndarray | None,
) -> Tier:
    if not config.strategies_k:
        return Tier(None)
    pending = [s for s in profile.questions() if s.fact_id is not None]
    if not pending:
        return Tier(None)
    rank = {fid: n for n, fid in enumerate(fact_ids)}
    touched = sorted((s for s in pending if s.fact_id in rank), key=lambda s: rank[s.fact_id])  # type: ignore[index]
    chosen = touched[: config.strategies_k]
    rest = [s for s in pending if s.fact_id not in rank]
    if rest and len(chosen) < config.strategies_k and message.strip():
        ids = sorted({s.fact_id for s in rest if s.fact_id is not None})
        found = profile.fact_hits(message, qvec, config.strategies_k, fact_ids=ids)
        near = [fact for fact, hit in found if hit.score >= config.min_score]
        chosen += [s for fact in near for s in rest if s.fact_id == fact.id]
    chosen = chosen[: config.strategies_k]
    if not chosen:
        return Tier(None)
    items = [
        Item(f"q:{s.id}", s.question, s.created_at, extra=f"{s.kind} f:{s.fact_id}") for s in chosen
    ]
    part = Part("a question to ask naturally if it fits (once; never as a checklist)", items)
    return Tier(Section("T1q", "open question", [part]))
