"""The `memo` command: the markdown library from the shell (`memo index|search|status|...`).

A thin driver: it resolves the library root (`--root`, else `MEMO_ROOT` or `memo_root` in the
config file), loads the configured embedder, calls `tideline.library.Library`, and prints either
rich text or `--json`. Errors are one line on stderr with a non-zero exit code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from tideline.cli._app import open_app
from tideline.cli._help import HelpGroup, version_option
from tideline.cli._options import FREE_TEXT, option, takes
from tideline.cli._output import (
    console,
    err_console,
    errors_to_exit,
    floor_note,
    nothing,
    print_json,
    printable,
    progress_bar,
    styled,
    warn,
)
from tideline.fields import (
    MEMO_READ,
    MEMO_REINDEX,
    MEMO_ROUTE,
    MEMO_SEARCH,
    MEMO_STATUS,
    MEMO_WRITE,
)
from tideline.library import Library, Problem, SyncReport

app = typer.Typer(
    name="memo",
    help="memo: a markdown library searched by meaning and by exact words.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    cls=HelpGroup,  # --help in words, with examples (cli._help)
)

RootOpt = typer.Option(None, "--root", help="Library root (default: MEMO_ROOT).")
JsonOpt = typer.Option(False, "--json", help="Print JSON.")
RootArg = typer.Argument(None, metavar="ROOT", help="Library root (default: --root or MEMO_ROOT).")


@app.callback()
def _root(version: bool = version_option()) -> None:
    """memo: a markdown library searched by meaning and by exact words."""


@contextmanager
def _library(root: Path | None, *, embed: bool = True) -> Iterator[Library]:
    """The app's library at `root` (else `memo_root`); `embed=False` loads no model."""
    with open_app(memo_root=root, embedder=None if embed else "none") as app:
        yield app.library


class _Bar:
    """A rich progress bar on stderr, one task per collection phase."""

    def __init__(self, enabled: bool):
        self.progress = progress_bar(
            TextColumn("{task.description}", markup=False),  # collection names are text
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            quiet=not enabled,
        )
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> _Bar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(None, None, None)

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase not in self.tasks:
            self.tasks[phase] = self.progress.add_task(printable(phase), total=total)
        self.progress.update(self.tasks[phase], completed=done, total=total)


def _print_reports(
    reports: list[SyncReport], json_out: bool, unseen: list[Problem] | None = None
) -> None:
    """The sync table; `unseen`: folders of notes that were not indexed, each with its fix."""
    if json_out:
        data: dict[str, Any] = {"collections": [r.to_dict() for r in reports]}
        if unseen is not None:
            data["not_indexed"] = [p.__dict__ for p in unseen]
        print_json(data)
        return
    table = Table("collection", "files", "changed", "removed", "embedded", "reused", "seconds")
    for r in reports:
        table.add_row(
            r.collection,
            str(r.scanned),
            str(r.changed),
            str(r.removed),
            str(r.embedded),
            str(r.reused_vectors),
            f"{r.seconds:.2f}",
        )
    console.print(table)
    for r in reports:
        for w in r.warnings:
            err_console.print(
                styled(("warning:", "yellow"), f" {w}"), highlight=False, soft_wrap=True
            )
        for p in r.skipped:
            err_console.print(
                styled(("skipped:", "yellow"), f" {p.message}"), highlight=False, soft_wrap=True
            )
    for p in unseen or []:
        err_console.print(
            styled(("not indexed:", "yellow"), f" {p.message}"), highlight=False, soft_wrap=True
        )


@app.command("index")
def index(
    root_arg: Path = RootArg,
    root: Path = RootOpt,
    full: bool = typer.Option(False, "--full", help="Rebuild every index from scratch."),
    json_out: bool = JsonOpt,
) -> None:
    """Index every collection under ROOT (only changed files are re-read and re-embedded)."""
    with errors_to_exit(), _library(root_arg or root) as lib, _Bar(not json_out) as bar:
        reports = lib.index(full=full, progress=bar)
        unseen = lib.unseen()
    _print_reports(reports, json_out, unseen)
    if not reports:
        err_console.print(
            "nothing indexed: no folder has a usable _meta.yaml"
            + ("; see above" if unseen else "; run `memo init-collection FOLDER -d ...`"),
            highlight=False,
        )
        raise typer.Exit(1)


@app.command("reindex")
def reindex(
    path: str = option(MEMO_REINDEX, "path"),
    root: Path = RootOpt,  # here, not after the spec's options: --help lists it before --full
    full: bool = option(MEMO_REINDEX, "full"),
    json_out: bool = JsonOpt,
) -> None:
    """Catch up (or rebuild with --full) the index of PATH: the fix when the watcher went blind."""
    with errors_to_exit(), _library(root) as lib, _Bar(not json_out) as bar:
        reports = lib.reindex(path, full=full, progress=bar)
    _print_reports(reports, json_out)


@app.command("search", context_settings=FREE_TEXT)
@takes(MEMO_SEARCH, {"path": "-p", "k": "-k"})
def search(root: Path = RootOpt, json_out: bool = JsonOpt, **args: Any) -> None:
    """Search notes, best first by relevance: `path:line`, heading, why, and the chunk text;
    an empty answer means nothing relevant."""
    query, k = args["query"], args["k"]
    with errors_to_exit(), _library(root, embed=args["mode"] != "lex") as lib:
        result = lib.search(**args)
    if json_out:
        print_json(result.to_dict())
        return
    warn(result)
    if not result.hits:
        nothing(result, query, k)
    for n, h in enumerate(result.hits, 1):
        console.print(
            styled((f"{n}. {h.location}", "bold"), f"  {h.heading}  ", (h.explain(), "dim")),
            highlight=False,
        )
        console.print(h.text, highlight=False)
        console.print()
    floor_note(result, len(result.hits), k)


#: Folders of notes `memo status` lists as rows although they are not collections.
_INVISIBLE = {"unregistered": "not a collection: no _meta.yaml", "bad-meta": "_meta.yaml broken"}


@app.command("status")
@takes(MEMO_STATUS)
def status(root: Path = RootOpt, json_out: bool = JsonOpt, **args: Any) -> None:
    """What is indexed, when, whether the index lags the files, and what is not indexed and why."""
    with errors_to_exit(), _library(root) as lib:
        data = lib.status(**args)
    if json_out:
        print_json(data)
        return
    table = Table("collection", "description", "files", "chunks", "pending", "behind", "skipped")
    lines = [(p["kind"], p["message"]) for p in data["problems"]]
    for c in data["collections"]:
        if c["indexed"]:
            row = [str(c["files"]), str(c["chunks"]), str(c["vectors_pending"]), str(c["behind"])]
        else:
            row = ["-", "-", "-", "refused" if "error" in c else "not indexed"]
        table.add_row(c["name"], c["description"][:50], *row, str(len(c["skipped"])))
        lines += [(s["kind"], f"{s['path']}: {s['reason']}") for s in c["skipped"]]
        lines += [("error", c["error"])] if "error" in c else []
    for p in data["problems"]:
        if p["kind"] in _INVISIBLE:
            table.add_row(f"{p['path']}/", styled((_INVISIBLE[p["kind"]], "yellow")), *"-----")
    console.print(f"library {data['root']} · embedder {data['embedder']}")
    console.print(table)
    for kind, message in lines:
        err_console.print(
            styled((f"{kind}:", "yellow"), f" {message}"), highlight=False, soft_wrap=True
        )


@app.command("route", context_settings=FREE_TEXT)
@takes(MEMO_ROUTE, {"k": "-k"})
def route(root: Path = RootOpt, json_out: bool = JsonOpt, **args: Any) -> None:
    """Which collections to search for QUERY: the candidates and the strategy used."""
    with errors_to_exit(), _library(root) as lib:
        result = lib.route(**args)
    if json_out:
        print_json(result.to_dict())
        return
    console.print(f"{result.strategy} routing over {result.total} collections", highlight=False)
    for c in result.candidates:
        console.print(f"{c.name} — {c.description}", highlight=False)
    if result.tree:
        console.print("tree: " + ", ".join(f"{n}/ ({m})" for n, m in result.tree.items()))


@app.command("write", context_settings=FREE_TEXT)
@takes(MEMO_WRITE)
def write(root: Path = RootOpt, json_out: bool = JsonOpt, **args: Any) -> None:
    """Create a note in a collection (or add to one with --append), atomically, and index it."""
    if args["text"] == "-":
        args["text"] = sys.stdin.read()
    with errors_to_exit(), _library(root) as lib:
        written = lib.write(**args)
    if json_out:
        print_json(written.to_dict())
        return
    verb = "created" if written.created else f"appended at line {written.added_at_line}"
    again = "; already written: nothing was added" if written.replayed else ""
    console.print(f"{written.path} {verb} ({written.bytes:,} bytes){again}", highlight=False)


@app.command("read")
@takes(MEMO_READ)
def read(root: Path = RootOpt, json_out: bool = JsonOpt, **args: Any) -> None:
    """Print a note, or lines --start to --end of it (PATH may be a search hit's path:line)."""
    with errors_to_exit(), _library(root, embed=False) as lib:
        note = lib.read(**args)
    if json_out:
        print_json(note.to_dict())
        return
    sys.stdout.write(note.text + "\n")
    if note.more:
        err_console.print(
            f"({note.path}: lines {note.start}–{note.end} of {note.total_lines}; "
            f"read on with --start {note.end + 1})",
            highlight=False,
        )


@app.command("init-collection")
def init_collection(
    path: str = typer.Argument(..., help="Folder 1–2 levels below the root, e.g. work/jira."),
    description: str = typer.Option(..., "--description", "-d", help="What the folder holds."),
    tags: str = typer.Option("", "--tags", help="Comma-separated tags."),
    name: str = typer.Option("", "--name", help="Name in the registry (default: the path)."),
    root: Path = RootOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Write PATH/_meta.yaml and register the collection."""
    tag_list = [t.strip() for t in tags.split(",") if t.strip()]
    with errors_to_exit(), open_app(memo_root=root, embedder="none") as app:
        chosen = app.settings.memo_root
        made = chosen is not None and not chosen.expanduser().exists()
        if made and chosen is not None:  # the first collection starts the library
            chosen.expanduser().mkdir(parents=True)
        c = app.library.init_collection(path, description, tags=tag_list, name=name)
    if json_out:
        print_json({"name": c.name, "path": c.rel, "meta": c.meta.to_yaml(), "root_created": made})
    else:
        if made:
            console.print(f"library root {app.library.root} created", highlight=False)
        console.print(f"collection {c.name} registered ({c.rel}/_meta.yaml)", highlight=False)


@app.command("watch")
def watch(
    root_arg: Path = RootArg,
    root: Path = RootOpt,
    debounce: float = typer.Option(0.5, "--debounce", help="Seconds of quiet before indexing."),
    reconcile: float = typer.Option(12.0, "--reconcile-minutes", help="Full stat scan period."),
    json_out: bool = typer.Option(False, "--json", help="One JSON line per sync on stdout."),
) -> None:
    """Watch ROOT and index hand edits within a second; reconcile every few minutes."""

    def report(reports: list[SyncReport]) -> None:
        changed = [r for r in reports if not r.noop]
        if json_out:
            for r in changed:
                sys.stdout.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
            sys.stdout.flush()
        else:
            for r in changed:
                err_console.print(
                    f"{r.collection}: {r.changed} changed, {r.removed} removed, "
                    f"{r.embedded} embedded ({r.seconds:.2f}s)",
                    highlight=False,
                )

    with errors_to_exit(), open_app(memo_root=root_arg or root) as app:
        report(app.library.index())
        if not json_out:
            err_console.print(f"watching {app.library.root} (Ctrl-C to stop)", highlight=False)
        app.watcher(debounce=debounce, reconcile_every=reconcile * 60, on_sync=report).run_forever()
