"""`tideline export`: everything the agent remembers, as a backup (JSONL) or to read (markdown)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import typer

from tideline.cli._app import open_app
from tideline.cli._options import takes
from tideline.cli._output import err_console, errors_to_exit, print_json
from tideline.errors import InvalidInput
from tideline.fields import EXPORT

JSON = typer.Option(False, "--json", help="Print what was written as JSON (on stderr with -o -).")


@takes(EXPORT, {"output": "-o"})
def export(json_out: bool = JSON, **args: Any) -> None:
    """Export sessions, turns, narratives (with their links) and the profile. The JSONL is a
    complete backup: `tideline import FILE` restores it into any home."""
    file, output = args["file"], args["output"]
    if file is not None:
        if output not in ("-", file):
            with errors_to_exit():
                raise InvalidInput(
                    f"export names two files ({file} and -o {output}); name the file once"
                )
        output = file
    with open_app() as app, _target(output) as out:
        counts = app.export(out, args["format"])
    if json_out:
        if output == "-":
            err_console.print_json(data=counts)
        else:
            print_json(counts)
    else:
        written = ", ".join(f"{n} {kind}s" for kind, n in counts.items()) or "nothing"
        where = "" if output == "-" else f" to {output}"
        err_console.print(f"exported {written}{where}", highlight=False, soft_wrap=True)


@contextlib.contextmanager
def _target(output: str) -> Iterator[TextIO]:
    """Standard output, or a file written whole: a temporary file beside it, renamed at the end,
    so an interrupted export never leaves half a backup under the real name."""
    if output == "-":
        yield sys.stdout
        return
    path = Path(output)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise InvalidInput(
            f"cannot write {output}: {exc.strerror or exc}; pass a file in a folder you can write"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yield fh
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def register(app: typer.Typer) -> None:
    app.command("export")(export)
