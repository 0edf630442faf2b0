"""Shared output helpers for the CLI drivers: JSON or rich, errors on stderr with exit codes,
search results (`tideline search`, `memo search`) with "nothing relevant" as an answer.

User text (queries, notes, narratives, turns, and errors that quote them) is printed as it is:
both consoles have rich markup off, so `[/x]` in a note is text, not a tag that fails to close.
Colour comes from `styled`, never from `[red]` tags inside a string. One exception to "as it is":
rich 15 mis-measures a zero width joiner that joins no two emoji (leading, doubled, beside a
letter), and cutting such text to the terminal width raised IndexError or ZeroDivisionError in
rich's `set_cell_size`; `printable` leaves those joiners out of what is printed (a joiner between
two emoji, as in 👩‍💻 or 🏳️‍🌈, is kept). Stored text is never changed.

Exit codes: 0 ok; 1 a check failed / nothing found where something was required; 2 bad input or
usage; 3 a store problem (locked, not a database, newer schema); 4 the embedder is unavailable;
5 busy: another sleep is running (try again later); 6 skipped: a sleep or dream had no LLM for
its LLM steps (they wait for a run with one).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, ProgressColumn
    from rich.text import Text

    from tideline.search import SearchResult

from tideline.errors import EmbedderError, InvalidInput, SleepBusy, StoreError, TidelineError

_EMOJI = "\U0001f000-\U0001faff\u2600-\u27bf"
_LOOSE_JOINER = re.compile(f"(?<![{_EMOJI}\ufe0f])\u200d|\u200d(?![{_EMOJI}])")


def printable(text: str) -> str:
    """`text` without the zero width joiners rich cannot measure (see the module docstring)."""
    return _LOOSE_JOINER.sub("", text) if "\u200d" in text else text


#: The width of output that is not a terminal (a pipe, a file, a script's capture) and has no
#: COLUMNS: wide enough that no table cell is cut to fit 80 columns (`locomo/conv-26/…`).
UNCUT = 10_000


def _console(**options: Any) -> Console:
    """A rich console for user text: every plain string it renders (a line, a table cell) goes
    through `printable`; off a terminal it is `UNCUT` wide unless COLUMNS says otherwise."""
    from rich.console import Console, ConsoleDimensions

    class _Console(Console):
        def render_str(self, text: str, **kwargs: Any) -> Text:
            return super().render_str(printable(text), **kwargs)

        @property
        def size(self) -> ConsoleDimensions:
            found = super().size
            if self.is_terminal or self._environ.get("COLUMNS", "").isdigit():
                return found
            return ConsoleDimensions(UNCUT, found.height)

        @size.setter
        def size(self, new_size: tuple[int, int]) -> None:
            self._width, self._height = new_size

    return _Console(**options)


class _Deferred:
    """A console made on first use: `tideline search --json` prints no rich text and so never
    imports rich (issue 34: start-up)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._made: Console | None = None

    def made(self) -> Console:
        """The console itself (for rich's own objects, which want a real `Console`)."""
        if self._made is None:
            self._made = _console(**self._options)
        return self._made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)


_out = _Deferred(markup=False)
_err = _Deferred(stderr=True, markup=False)
console = cast("Console", _out)
err_console = cast("Console", _err)


def progress_bar(*columns: ProgressColumn | str, quiet: bool = False) -> Progress:
    """A progress bar on stderr, gone when done; only on a terminal and without `quiet`
    (--json): in a pipe or a log it would print nothing but a stray empty line."""
    from rich.progress import Progress  # here: a search does not import the progress bar

    return Progress(
        *columns,
        console=_err.made(),
        transient=True,
        disable=quiet or not err_console.is_terminal,
    )


def styled(*parts: str | tuple[str, str]) -> Text:
    """Plain strings and (text, style) pairs as one line: colour without parsing markup."""
    from rich.text import Text

    return Text.assemble(
        *(printable(p) if isinstance(p, str) else (printable(p[0]), p[1]) for p in parts)
    )


def quoted(text: str, limit: int = 80) -> str:
    """`text` as a message quotes it: a 128 KiB argument is not echoed back whole."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def _default(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if hasattr(obj, "__dict__"):
        return vars(obj)
    return str(obj)


def shown(value: Any) -> str:
    """A value as a person reads it: no `{'narrative': 1}`, `None` or `True` on the screen."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, dict):
        return ", ".join(f"{shown(v)} {k}" for k, v in value.items()) or "none"
    if isinstance(value, list | tuple):
        return ", ".join(shown(v) for v in value) or "none"
    return str(value)


def print_fields(data: dict[str, Any]) -> None:
    """`label  value` lines, labels in words and values aligned in one column."""
    labels = {key: key.replace("_", " ") for key in data}
    width = max((len(label) for label in labels.values()), default=0)
    for key, value in data.items():
        console.print(f"{labels[key]:<{width}}  {shown(value)}", highlight=False)


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=_default) + "\n")


SKIPPED = 6  # a sleep or dream that could not run its LLM steps: not done, not failed


def exit_code(exc: TidelineError) -> int:
    if isinstance(exc, InvalidInput):
        return 2
    if isinstance(exc, StoreError):
        return 3
    if isinstance(exc, EmbedderError):
        return 4
    if isinstance(exc, SleepBusy):
        return 5
    return 1


@contextmanager
def errors_to_exit() -> Iterator[None]:
    """Turn a `TidelineError` into one line on stderr and a meaningful exit code."""
    try:
        yield
    except TidelineError as exc:
        err_console.print(styled(("error:", "red"), f" {exc}"), highlight=False, soft_wrap=True)
        raise typer.Exit(exit_code(exc)) from None


# How the CLI prints search results (`tideline search`, `memo search`): best first by relevance,
# each with the one explanation every driver shows (`Hit.explain`), and "nothing relevant" as an
# answer with what to do about it, here in the CLI's own terms.
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
