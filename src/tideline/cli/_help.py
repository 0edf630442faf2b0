"""How `--help` reads: what an option takes in words, one-sentence command lists, examples.

typer shows each parameter's Python type (`<bool>` on a flag, `<list[int]>`, an id's bounds up to
2^63 − 1) and lists a command by its docstring's first paragraph with the docstring's line
breaks. `HelpGroup`, the class of both apps (`tideline`, `memo`), fixes what every command under
it shows once, when typer builds them: a flag takes nothing, an id takes an ID, a bounded number
shows its bounds ("1–200"); the list gives each command its first sentence; every command ends
with examples from `EXAMPLES` (tests/cli/test_help.py runs each through the parser).

`--version`, the other eager flag of both apps, prints the installed package's version (the same
one MCP reports) and exits before any command (`version_option`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, get_args, get_origin

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from tideline.cli._coerce import runtime_param
from tideline.store import MAX_ID

#: What `--help` shows under each command, by its path: one command line each.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "tideline doctor": ("tideline doctor", "tideline doctor --repair"),
    "tideline serve": (
        "tideline serve --transport http",
        "tideline serve --transport http -p 9000",
    ),
    "tideline search": (
        'tideline search "Lisbon trip"',
        "tideline search vpn-7 --mode lex --since 2026-05-01 --json",
    ),
    "tideline write": ('tideline write "Kai moved to Lisbon in June" --tag travel --link 12',),
    "tideline trace": ("tideline trace 42",),
    "tideline import": (
        "tideline import ~/Downloads/conversations.json",
        "tideline import backup.jsonl",
    ),
    "tideline sessions": ("tideline sessions --limit 5",),
    "tideline stats": ("tideline stats --json",),
    "tideline embed": ("tideline embed",),
    "tideline forget": (
        'tideline forget "old address"',
        'tideline forget --turn 12 --turn 13 --why "asked by the user" --yes',
    ),
    "tideline export": ("tideline export backup.jsonl", "tideline export --format markdown"),
    "tideline migrate": (
        "tideline migrate --to postgresql://tideline@127.0.0.1/memories",
        "tideline migrate --to ~/memory-back.db",
    ),
    "tideline heatmap": ("tideline heatmap --since 2026-05-01",),
    "tideline inject": ("tideline inject",),
    "tideline prefetch": ('tideline prefetch "How is Anna settling in?" --session s1',),
    "tideline sleep": ("tideline sleep --dry-run", "tideline sleep"),
    "tideline runs": ("tideline runs --limit 5",),
    "tideline profile": ("tideline profile --category city", "tideline profile --as-of 2026-06-01"),
    "tideline dream": ("tideline dream --dry-run", "tideline dream --date 2026-03-14"),
    "tideline threads": (
        "tideline threads",
        'tideline threads open --title "Move to Lisbon?" --why "asked twice" --memory 7',
        "tideline threads close --id 3 --status dropped",
    ),
    "tideline dream-runs": ("tideline dream-runs --limit 5",),
    "tideline scripts all": ("tideline scripts all",),
    "tideline scripts topics": ("tideline scripts topics --json",),
    "tideline scripts recurrence": ("tideline scripts recurrence",),
    "tideline scripts clusters": ("tideline scripts clusters",),
    "tideline scripts graph": ("tideline scripts graph --dot graph.dot",),
    "tideline scripts scan": ("tideline scripts scan --after 2026-05-01",),
    "tideline scripts backfill": ("tideline scripts backfill --dry-run",),
    "tideline scripts heatmap": ("tideline scripts heatmap --since 2026-05-01",),
    "tideline fact show": ("tideline fact show 7",),
    "tideline fact reject": ('tideline fact reject 7 --why "it was a joke"',),
    "tideline fact close": ('tideline fact close 7 --why "moved to Porto"',),
    "tideline hermes install": ("tideline hermes install", "tideline hermes install --uninstall"),
    "memo index": ("memo index ~/notes",),
    "memo reindex": ("memo reindex work/jira --full",),
    "memo search": ('memo search "vpn outage" --path work', "memo search vpn-7 --mode lex"),
    "memo status": ("memo status",),
    "memo route": ('memo route "vpn outage"',),
    "memo write": ('memo write work/jira/vpn-7.md "vpn-7 is back"',),
    "memo read": ("memo read work/jira/vpn-7.md:42",),
    "memo init-collection": ('memo init-collection work/jira --description "Jira tickets"',),
    "memo watch": ("memo watch ~/notes",),
}

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(])")


def summary(help_text: str | None) -> str:
    """A command's line in a list: the first sentence of its help, on one line."""
    paragraph = (help_text or "").strip().split("\n\n")[0]
    return _SENTENCE_END.split(" ".join(paragraph.split()))[0]


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"{low:g}–{high:g}"
    return f"{low:g} or more" if low is not None else f"up to {high:g}"


#: A value's type in words, by its Python type.
_WORDS: dict[Any, str] = {int: "INTEGER", float: "NUMBER", str: "TEXT", bool: "true|false"}


def takes(param: TyperOption | TyperArgument) -> str:
    """What a parameter takes, in words: nothing for a flag, ID, TEXT, a number's bounds, …"""
    if isinstance(param, TyperOption) and param.is_flag:
        return ""
    described: Any = param.type_descriptor  # typer's reading of the annotation
    if described.is_choice:
        return "|".join(str(getattr(c, "value", c)) for c in described.choices or ())
    kind = described.annotation
    if get_origin(kind) is list:  # a repeated option: each value is one of these
        (kind,) = get_args(kind)
    low, high = param.min, param.max
    if kind is int and (low, high) == (1, MAX_ID):
        return "ID"
    if kind in (int, float) and (low is not None or high is not None):
        return ("NUMBER " if kind is float else "") + _bounds(low, high)
    if described.is_path:
        return "PATH"
    if described.is_datetime:
        return "TIME"
    return _WORDS.get(kind, "TEXT")


def _shown_type(self: TyperOption | TyperArgument, ctx: Any) -> str | None:
    return takes(self) or None


def _no_range(self: TyperOption | TyperArgument) -> str | None:
    return None  # `takes` says the bounds


class _Option(TyperOption):
    """A typer option whose `--help` says what it takes in words, and whose values convert
    without pydantic where they are plain (`cli._coerce`)."""

    display_type_rich = _shown_type
    _get_number_range_help_str = _no_range
    get_runtime_param = runtime_param


class _Argument(TyperArgument):
    """A typer argument whose `--help` says what it takes in words, and whose values convert
    without pydantic where they are plain (`cli._coerce`)."""

    display_type_rich = _shown_type
    _get_number_range_help_str = _no_range
    get_runtime_param = runtime_param


def _worded(params: list[Any]) -> list[Any]:
    """`params`, each showing what it takes in words (the same objects: only `--help` differs)."""
    for p in params:
        if type(p) is TyperOption:
            p.__class__ = _Option
        elif type(p) is TyperArgument:
            p.__class__ = _Argument
    return params


class _Command(TyperCommand):
    """A command whose parameters, `--help` among them (made on first use), read in words."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _worded(super().get_params(ctx))


def _examples(path: str) -> str | None:
    found = EXAMPLES.get(path)
    return "Examples:\n" + "\n".join(f"$ {line}" for line in found) if found else None


def _plain(command: Any, path: str) -> None:
    """`command` and every command under it, as `--help` should show them."""
    if type(command) is TyperCommand:
        command.__class__ = _Command
    elif type(command) is TyperGroup:
        command.__class__ = HelpGroup  # made already: only its display changes
    command.short_help = summary(command.help)
    command.epilog = _examples(path) or command.epilog
    subcommands: Iterable[tuple[str, Any]] = getattr(command, "commands", {}).items()
    for name, sub in subcommands:
        _plain(sub, f"{path} {name}")


class HelpGroup(TyperGroup):
    """The class of a CLI's top-level group (`typer.Typer(cls=HelpGroup)`), and of the groups
    under it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name, sub in self.commands.items():
            _plain(sub, f"{self.name} {name}")

    def get_params(self, ctx: Any) -> list[Any]:
        return _worded(super().get_params(ctx))


def _show(value: bool) -> None:
    if value:
        from tideline import __version__

        typer.echo(f"tideline {__version__}")
        raise typer.Exit()


def version_option() -> Any:
    """An eager `--version` flag for an app's callback: prints and exits before any command."""
    return typer.Option(
        False, "--version", callback=_show, is_eager=True, help="Print the version and exit."
    )
