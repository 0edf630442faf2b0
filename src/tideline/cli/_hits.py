"""How the CLI prints search results (`tideline search`, `memo search`): best first by
relevance, each with the one explanation every driver shows (`Hit.explain`), and "nothing
relevant" as an answer with what to do about it, here in the CLI's own terms."""

from __future__ import annotations

import typer

from tideline.cli._output import err_console, quoted, styled
from tideline.search import SearchResult


def warn(result: SearchResult) -> None:
    """The result's warnings on stderr, one line each."""
    for w in result.warnings:
        err_console.print(styled(("warning:", "yellow"), f" {w}"), highlight=False, soft_wrap=True)


def floor_note(result: SearchResult, shown: int, k: int) -> None:
    """When the floor left results out of a short list: how many, and how to see them."""
    if result.left_out and shown < k:
        err_console.print(
            styled(
                ("note:", "yellow"),
                f" {result.left_out} result(s) {result.under()} left out; --min-score 0 shows them",
            ),
            highlight=False,
            soft_wrap=True,
        )


def nothing(result: SearchResult, query: str, k: int) -> None:
    """No hits: say so (with the floor's note) and exit 1."""
    where = f" in {result.scope}" if result.scope else ""
    err_console.print(
        f"nothing relevant found for {quoted(query)}{where}", highlight=False, soft_wrap=True
    )
    floor_note(result, 0, k)
    raise typer.Exit(1)
