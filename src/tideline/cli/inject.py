"""`tideline inject` and `tideline prefetch`: the provider hooks from the command line.

`inject` prints the identity block (T0, T2, T2b, T3) exactly as `system_prompt_block()` returns
it; `prefetch MESSAGE` prints the per-turn block (T1, T4) and logs attention like the hook does.
With `--json` both print the structured block: sections, items, tokens, budgets and notes.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from tideline.cli._app import open_app
from tideline.cli._options import takes
from tideline.cli._output import print_json
from tideline.fields import PREFETCH

JSON = typer.Option(False, "--json", help="Print the block as JSON (sections, items, notes).")


def inject(json_out: bool = JSON) -> None:
    """Print the identity block an agent gets at session start (T0, T2, T2b, T3)."""
    with open_app() as app:
        block = app.provider.identity()
    if json_out:
        print_json(block.to_dict())
    else:
        sys.stdout.write(block.text + "\n")


@takes(PREFETCH)
def prefetch(json_out: bool = JSON, **args: Any) -> None:
    """Print the per-turn block for MESSAGE (T1, and T4 when T1 finds fewer than 2)."""
    with open_app() as app:
        block = app.provider.prefetch_block(**args)
    if json_out:
        print_json(block.to_dict())
    else:
        sys.stdout.write(block.text + "\n")


def register(app: typer.Typer) -> None:
    app.command("inject")(inject)
    app.command("prefetch")(prefetch)
