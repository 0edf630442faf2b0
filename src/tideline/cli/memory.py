"""`tideline write|search|trace|import|sessions|stats|embed`: mirrors of the MCP memory tools."""

from __future__ import annotations

from typing import Any

import typer

from tideline.cli._app import open_app
from tideline.cli._options import FREE_TEXT, takes
from tideline.cli._output import (
    console,
    err_console,
    floor_note,
    nothing,
    print_fields,
    print_json,
    progress_bar,
    styled,
    warn,
)
from tideline.fields import IMPORT, MEMORY_SEARCH, MEMORY_TRACE, MEMORY_WRITE, SESSIONS

JSON = typer.Option(False, "--json", help="Print JSON.")


@takes(MEMORY_WRITE)
def write(json_out: bool = JSON, **args: Any) -> None:
    """Write a narrative memory (with --supersedes, a correction of an older one)."""
    with open_app() as app:
        n = app.memory.write(**args)
    if json_out:
        print_json(n.to_dict())
    else:
        corrects = f"; it supersedes narrative {n.supersedes}" if n.supersedes else ""
        done = "already written (the same idempotency key)" if n.replayed else "written"
        console.print(
            f"narrative {n.id} {done} (weight {n.weight:.3f}, recurrence {n.recurrence}){corrects}"
        )


@takes(MEMORY_SEARCH, {"k": "-k"})
def search(json_out: bool = JSON, **args: Any) -> None:
    """Search memories and raw turns (--no-turns: memories only); empty means nothing relevant.

    A query that starts with a dash (`tideline search -word`) is a query; one that starts like
    an option (`-k…`, `--turns`) needs `--` first: `tideline search -- --turns`."""
    query, k = args["query"], args["k"]
    args["tags"] = args["tags"] or None  # no --tag: no filter
    with open_app() as app:
        result = app.memory.search(**args)
    warn(result)
    if json_out:
        print_json(result.to_dict())
        return
    if not result.hits:
        nothing(result, query, k)
    from rich.table import Table  # here: a search printing JSON does not import rich

    table = Table("type", "id", "relevance", "when", "text", "why")
    for h in result.hits:
        table.add_row(
            h.type,
            str(h.id),
            f"{h.score:.2f}",
            (h.created_at or "")[:10],
            h.text[:100],
            h.explain(),
        )
    console.print(table)
    floor_note(result, len(result.hits), k)


@takes(MEMORY_TRACE)
def trace(json_out: bool = JSON, **args: Any) -> None:
    """Show a narrative's source turns with their neighbours."""
    with open_app() as app:
        t = app.memory.trace(**args)
    if json_out:
        print_json(t.to_dict())
        return
    n = t.narrative
    console.print(
        styled((n.gesture, "bold"), f"  (id {n.id}, weight {n.weight:.3f})"), highlight=False
    )
    retired = f", retired {n.retired_at[:16]}" if n.retired_at else ""
    console.print(
        f"{n.kind} of {n.created_at[:16]} (the user's time) · recorded "
        f"{(n.recorded_at or n.updated_at)[:16]}{retired} (Tideline's time)",
        highlight=False,
    )
    if n.forgotten_at:
        console.print(f"forgotten {n.forgotten_at}: {n.forgotten_why}", highlight=False)
    if n.superseded_by is not None:
        console.print(f"superseded by narrative {n.superseded_by}", highlight=False)
    for win in t.windows:
        console.print(f"── {win[0].turn.session}")
        for tt in win:
            mark = "▶" if tt.source else " "
            console.print(
                f"{mark} [{tt.turn.id}] {tt.turn.speaker or tt.turn.role}: {tt.turn.text}",
                soft_wrap=True,
            )


@takes(IMPORT, {"format": "-f"})
def import_(json_out: bool = JSON, **args: Any) -> None:
    """Import chats (ChatGPT, Claude, transcripts), a peer's memory (MCP, mem0, Letta), a backup."""
    # here: a search does not import the progress bar (rich.progress: ~0.1 s)
    path = args["path"]
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

    with (
        open_app() as app,
        progress_bar(
            TextColumn("embedding"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            quiet=json_out,
        ) as bar,
    ):
        task = bar.add_task("embed", total=None)
        summary = app.memory.import_file(
            path,
            args["format"],
            lambda d, t: bar.update(task, completed=d, total=t),
            args["session"],
        )
    if json_out:
        print_json(summary.to_dict())
    else:
        if summary.detected:
            err_console.print(
                f"recognised {path} as {summary.format}", highlight=False, soft_wrap=True
            )
        why = [f"{n} {kind}" for kind, n in summary.skipped_kinds.items()]
        if summary.refused:
            why.append(f"{summary.refused} refused, listed below")
        kinds = ", ".join(why)
        narratives = "".join(
            f"{added} {kind} added, {existing} already there, "
            for kind, added, existing in (
                ("narratives", summary.narratives_added, summary.narratives_existing),
                ("facts", summary.facts_added, summary.facts_existing),
                (
                    "other profile records",
                    sum(summary.profile_added.values()),
                    sum(summary.profile_existing.values()),
                ),
            )
            if added or existing
        )
        console.print(
            f"{summary.sessions} sessions, {summary.turns_added} turns added, "
            f"{summary.turns_existing} already there, {narratives}{summary.left_out} left out"
            + (f" ({kinds})" if kinds else ""),
            highlight=False,
            soft_wrap=True,
        )
        for p in summary.problems:
            where = f"line {p.line}: " if p.line else ""
            err_console.print(f"{where}{p.message}", style="red", soft_wrap=True)
        for w in summary.warnings:
            err_console.print(styled(("warning:", "yellow"), f" {w}"), soft_wrap=True)
    if summary.problems:
        raise typer.Exit(1)


@takes(SESSIONS)
def sessions(json_out: bool = JSON, **args: Any) -> None:
    """List sessions, most recent first."""
    with open_app() as app:
        rows = app.memory.sessions(**args)
    if json_out:
        print_json(rows)
        return
    from rich.table import Table

    table = Table("id", "session", "source", "turns", "from", "to")
    for r in rows:
        table.add_row(
            str(r["id"]),
            r["key"],
            r["source"],
            str(r["turns"]),
            r["started_at"] or "",
            r["ended_at"] or "",
        )
    console.print(table)


def stats(json_out: bool = JSON) -> None:
    """Counts of sessions, turns, narratives and vectors."""
    with open_app() as app:
        data = app.memory.stats()
    if json_out:
        print_json(data)
        return
    print_fields(data)


def embed(json_out: bool = JSON) -> None:
    """Embed every turn and narrative that has no vector yet."""
    with open_app() as app:
        done = app.memory.embed_pending()
        warnings = app.memory.warnings
    if json_out:
        print_json({"embedded": done, "warnings": warnings})
    else:
        console.print(f"{done} texts embedded")


def register(app: typer.Typer) -> None:
    app.command("search", context_settings=FREE_TEXT)(search)
    for name, fn in (
        ("write", write),
        ("trace", trace),
        ("import", import_),
        ("sessions", sessions),
        ("stats", stats),
        ("embed", embed),
    ):
        app.command(name)(fn)
