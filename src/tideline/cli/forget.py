"""`tideline forget`: show what a request names, and erase it only with --yes."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from tideline.cli._app import open_app
from tideline.cli._options import takes
from tideline.cli._output import console, err_console, print_json
from tideline.fields import MEMORY_FORGET
from tideline.memory import Forgetting

JSON = typer.Option(False, "--json", help="Print JSON.")


@takes(MEMORY_FORGET)
def forget(json_out: bool = JSON, **args: Any) -> None:
    """Forget turns, a session, memories, or everything containing some words: their text,
    vectors and search rows are erased, a tombstone keeps the id, the time and the reason.
    Without --yes it only shows what would be forgotten."""
    with open_app() as app:
        found = app.memory.forget(**args)
    if json_out:
        print_json({**found.to_dict(), "done": found.done})
    else:
        _show(found)
    if found.empty:
        raise typer.Exit(1)


def _show(found: Forgetting) -> None:
    if found.empty:
        err_console.print(
            "nothing matches, so nothing was forgotten", highlight=False, soft_wrap=True
        )
        return
    table = Table("type", "id", "when", "text")
    for s in found.sessions:
        table.add_row("session", s["key"], "", f"{s['turns']} turns" + _title(s["title"]))
    for n in found.narratives:
        table.add_row("narrative", str(n.id), n.created_at[:10], n.gesture[:100])
    for t in found.turns:
        table.add_row("turn", str(t.id), t.ts[:10], f"{t.speaker or t.role}: {t.text}"[:100])
    console.print(table)
    counted = f"{len(found.sessions)} sessions, {len(found.turns)} turns, {len(found.narratives)} narratives"
    if found.done:
        console.print(f"forgot {counted} (reason: {found.why})", highlight=False, soft_wrap=True)
    else:
        err_console.print(
            f"would forget {counted}; nothing changed yet — run it again with --yes to forget them",
            highlight=False,
            soft_wrap=True,
        )


def _title(title: str | None) -> str:
    return f" — {title}" if title else ""


def register(app: typer.Typer) -> None:
    app.command("forget")(forget)
