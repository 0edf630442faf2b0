"""`tideline profile` and `tideline fact reject|close|show`: read the profile, correct it.

A person may reject a fact (wrong) or close it (no longer true), never delete or edit it — the
seed's rule; both keep the row, its evidence and its end time, and show on the fact's timeline.
`tideline profile --as-of DATE` shows the profile as it stood on that date in the user's time;
the timeline (`fact show`) gives both clocks: when each change took effect in the user's life,
and when Tideline recorded it.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any

import typer

from tideline.cli._app import open_app
from tideline.cli._options import takes
from tideline.cli._output import console, print_json
from tideline.fields import FACT_CLOSE, FACT_REJECT, FACT_TIMELINE, MEMORY_PROFILE, fact_statuses
from tideline.profile import Fact, FactTimeline

JSON = typer.Option(False, "--json", help="Print JSON.")
TEXT = 100  # characters of an evidence turn shown

fact_app = typer.Typer(
    name="fact",
    help="One fact: its timeline, or mark it wrong (reject) or no longer true (close).",
    no_args_is_help=True,
)


def _say(line: str) -> None:
    console.print(line, highlight=False, markup=False, soft_wrap=True)


def _short(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= TEXT else flat[: TEXT - 1] + "…"


def _facts_line(f: Fact) -> str:
    until = f" → {f.valid_to[:10]}" if f.valid_to else ""
    why = f" — {f.rejected_why}" if f.rejected_why else ""
    disputed = f", disputed by {', '.join(f'#{i}' for i in f.disputed_by)}" if f.disputed_by else ""
    return (
        f"#{f.id} [{f.status}{disputed}] {f.value}  ({f.source_type}, confidence "
        f"{f.confidence:g}, {f.mention_count} mention(s) in {f.sessions} session(s), "
        f"{f.valid_from[:10]}{until}){why}"
    )


def _evidence(f: Fact, indent: str) -> None:
    for ev in f.evidence:
        where = f"turn {ev.turn_id}" if ev.turn_id else f"observation {ev.observation_id}"
        where += f", said {ev.said_at[:10]}" if ev.said_at else ""
        against = " (against)" if ev.polarity == "against" else ""
        _say(f"{indent}{where}{against}: {_short(ev.text)}" if ev.text else f"{indent}{where}")


@takes(MEMORY_PROFILE)
def profile(json_out: bool = JSON, **args: Any) -> None:
    """The facts Sleep formed, by subject and category, each with its evidence turns; with
    --as-of DATE, as they stood on that date in the user's time."""
    as_of = args.pop("as_of")
    args["status"] = fact_statuses(args["status"])
    with open_app() as app:
        if as_of is not None:
            view = app.profile.as_of(as_of, **args)
            facts = view.facts
        else:
            facts = app.profile.facts(**args)
    if json_out:
        print_json(view.to_dict() if as_of is not None else {"facts": [f.to_dict() for f in facts]})
        return
    if as_of is not None:
        _say(f"as of {view.as_of} (the user's time): {len(facts)} fact(s) believed then")
    if not facts:
        hint = "" if as_of is not None else "; run `tideline sleep` to form them from conversations"
        _say(f"no facts match{hint}")
        raise typer.Exit(1)
    _facts(facts)
    if as_of is not None:
        for e in view.events:
            to = (
                f" → {e.valid_to[:10]}"
                if e.valid_to and e.valid_to[:10] != e.valid_from[:10]
                else ""
            )
            _say(f"event {e.valid_from[:10]}{to}: {e.title}")
        for r in view.relationships:
            _say(
                f"person: {r.name}" + (f" ({r.relation})" if r.relation else "") + f" [{r.status}]"
            )


def _facts(facts: list[Fact]) -> None:
    facts.sort(key=lambda f: (f.subject.casefold(), f.category.casefold(), f.id))
    for subj, about in groupby(facts, key=lambda f: f.subject):
        _say(subj)
        for cat, in_category in groupby(about, key=lambda f: f.category):
            _say(f"  {cat}")
            for f in in_category:
                _say(f"    {_facts_line(f)}")
                _evidence(f, "        ")


def _timeline(t: FactTimeline) -> None:
    f = t.fact
    _say(f"fact #{f.id} [{f.status}] {f.subject} · {f.category}: {f.value}")
    expires = f", expires {f.expires_at[:10]}" if f.expires_at else ", never expires"
    _say(
        f"  {f.source_type}, confidence {f.confidence:g}, {f.mention_count} mention(s), "
        f"true from {f.valid_from[:10]} to {(f.valid_to or '—')[:10]}{expires} (the user's time)"
    )
    retired = f", retired {f.retired_at[:16]}" if f.retired_at else ""
    _say(f"  learnt {f.created_at[:16]}{retired} (Tideline's time)")
    if f.merged_into:
        _say(f"  merged into #{f.merged_into}")
    if f.evidence:
        _say("  evidence:")
        _evidence(f, "    ")
    if len(t.chain) > 1:
        _say("  supersedes chain (oldest first):")
        for c in t.chain:
            _say(f"  {'▶' if c.id == f.id else ' '} {_facts_line(c)}")
    _say("  changes (took effect, the user's time · recorded, Tideline's time):")
    for ch in t.changes:
        move = f"{ch.from_status} → {ch.to_status}" if ch.from_status else f"new, {ch.to_status}"
        run = f" (run {ch.run_id})" if ch.run_id else " (by hand)"
        why = f": {ch.why}" if ch.why else ""
        recorded = f" · {ch.recorded_at[:16]}" if ch.recorded_at else ""
        _say(f"    {ch.at[:16]}{recorded}  #{ch.fact_id} {move}{why}{run}")


@fact_app.command("show")
@takes(FACT_TIMELINE)
def show(json_out: bool = JSON, **args: Any) -> None:
    """A fact's timeline: its evidence, the facts it supersedes or that supersede it, and every
    status change."""
    with open_app() as app:
        timeline = app.profile.timeline(**args)
    if json_out:
        print_json(timeline.to_dict())
    else:
        _timeline(timeline)


@fact_app.command("reject")
@takes(FACT_REJECT)
def reject(json_out: bool = JSON, **args: Any) -> None:
    """Mark a fact wrong. It is kept, with its evidence, end time and reason, on its timeline."""
    with open_app() as app:
        fact = app.profile.reject(**args)
    _changed(fact, json_out)


@fact_app.command("close")
@takes(FACT_CLOSE)
def close(json_out: bool = JSON, **args: Any) -> None:
    """Mark a fact no longer true. It is kept, with its evidence and end time, on its timeline;
    with --successor, it ends when the fact that replaced it began, on one timeline."""
    with open_app() as app:
        fact = app.profile.close(**args)
    _changed(fact, json_out)


def _changed(fact: Fact, json_out: bool) -> None:
    if json_out:
        print_json(fact.to_dict())
    else:
        _say(f"fact #{fact.id} {fact.status} (kept; ends {fact.valid_to}): {fact.value}")


def register(app: typer.Typer) -> None:
    app.command("profile")(profile)
    app.add_typer(fact_app, name="fact")
