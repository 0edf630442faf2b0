"""`tideline dream`, `tideline threads`, `tideline dream-runs`: the daily DREAM run, the threads
it keeps, and the record of past runs.

`tideline dream` runs solidify → sleep → scripts → comb → drift → dream for one day through
`app.dream`. Each layer's line goes to stderr as it finishes (under a bar on a terminal); the run
record — status and run id, what was written by kind, tokens against the budget, what was
skipped or left pending and why — goes to stdout, or the whole report as JSON with `--json`.

Exit codes, as `tideline sleep`: 0 done (or planned, with --dry-run); 1 a layer failed or the
token budget stopped the run (the next run for the day retries from there); 2 bad input (an
unknown layer, a bad date); 5 another dream is running on this database; 6 skipped: no LLM for
the LLM layers (the script layer and Sleep's rule steps ran; a later run with an LLM does them).
"""

from __future__ import annotations

from typing import Any

import typer

from tideline.cli._app import open_app
from tideline.cli._options import takes
from tideline.cli._output import console, print_json
from tideline.cli._runs import past_runs, run_steps
from tideline.consolidate.dream import LAYERS, DreamReport, Thread, thread_action
from tideline.fields import DREAM_RUN, DREAM_RUNS, MEMORY_THREADS

JSON = typer.Option(False, "--json", help="Print JSON.")


def _say(line: str) -> None:
    console.print(line, highlight=False, markup=False, soft_wrap=True)


def record(report: DreamReport) -> list[str]:
    """The run as a person reads it after the layer lines: status, ids written, tokens, what
    was skipped or is left for the next run."""
    out = [report.lines()[0]]
    written = "; ".join(
        f"{kind} {', '.join(f'#{i}' for i in ids)}" for kind, ids in report.written.items() if ids
    )
    if report.dry_run:
        planned = [f"{r.name}: {r.note}" for r in report.layers if r.note]
        out.append("nothing written (dry run)" + ("; " + "; ".join(planned) if planned else ""))
    else:
        out.append(f"wrote: {written}" if written else "wrote nothing")
    out.append(report.tokens_line())
    if report.status == "skipped":  # the head line said why, once
        skipped = [r.name for r in report.layers if r.status == "skipped"]
        out.append(f"layers skipped: {', '.join(skipped)}; a later run with an LLM does them")
    pending = [r.name for r in report.layers if r.status == "pending"]
    if pending:
        out.append(
            f"not run: {', '.join(pending)}; `tideline dream --date {report.day}` retries "
            "from the layer that stopped"
        )
    return out


@takes(DREAM_RUN)
def dream(json_out: bool = JSON, **args: Any) -> None:
    """Dream one day: solidify, sleep, scripts, comb, drift, dream (each layer recorded)."""
    args["layers"] = args["layers"] or None  # none named: every layer
    run_steps(
        "dream", len(LAYERS), json_out, lambda app, p: app.dream.run(**args, progress=p), record
    )


def _thread_lines(t: Thread) -> list[str]:
    closed = f", {t.status} {t.closed_at[:10]}" if t.closed_at else ""
    mems = ", ".join(f"#{m}" for m in t.memories)
    out = [
        f"#{t.id} [{t.status}] {t.kind}: {t.title}  (opened {t.opened_at[:10]}, touched "
        f"{t.touched_at[:10]}{closed}; memories {mems or 'none'})"
    ]
    out += [f"    why: {t.why}"] if t.why else []
    return out + [f"    - {n}" for n in t.notes]


@takes(MEMORY_THREADS)
def threads(json_out: bool = JSON, **args: Any) -> None:
    """The threads dreaming keeps (open directions, conflicts): list, open, touch, close."""
    with open_app() as app:
        result = thread_action(app.dream, **args)
    if json_out:
        print_json(result)
        return
    found = result.get("threads", [result.get("thread")])
    if not found:
        _say(
            f"no {args['status'] or 'open'} threads; `tideline dream` opens them when it combs a day"
        )
        raise typer.Exit(1)
    for t in found:
        for line in _thread_lines(Thread(**t)):
            _say(line)


@takes(DREAM_RUNS)
def dream_runs(json_out: bool = JSON, **args: Any) -> None:
    """Past dream runs, most recent first: day, status, tokens, each layer's status and tokens."""
    found = past_runs(lambda app: app.dream.runs(**args), json_out)
    if found is None:
        return
    if not found:
        _say("no dream runs yet; `tideline dream` runs one")
        raise typer.Exit(1)
    for r in found:
        budget = f" of {r.budget}" if r.budget else ""
        _say(
            f"#{r.id} {r.day} {r.status}  {r.tokens_in}+{r.tokens_out} tokens{budget}, "
            f"{r.seconds:.2f}s, started {r.started_at} ({r.llm})"
        )
        for rec in r.records:
            tokens = f"{rec.tokens_in}+{rec.tokens_out} tokens" if rec.tokens_in else ""
            said = " — ".join(p for p in (tokens, rec.error or rec.note) if p)
            _say(f"    {rec.layer:<9} {rec.status:<8} {said}".rstrip())
        for error in r.errors:
            _say(f"    error: {error}")


def register(app: typer.Typer) -> None:
    app.command("dream")(dream)
    app.command("threads")(threads)
    app.command("dream-runs")(dream_runs)
