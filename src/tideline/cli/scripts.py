"""`tideline scripts all|topics|recurrence|clusters|graph|scan|backfill|heatmap`: the script layer.

Only maps options onto `tideline.analysis.*` and prints: a summary of what changed, or `--json`.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from tideline.analysis import to_dot
from tideline.analysis.attention import heatmap as build_heatmap
from tideline.analysis.backfill import backfill_source_links
from tideline.analysis.scanner import scan_unindexed
from tideline.analysis.scripts import rebuild_entity_graph, run_all
from tideline.cli._app import open_app
from tideline.cli._options import option, takes
from tideline.cli._output import console, err_console, print_json, progress_bar, styled
from tideline.fields import ATTENTION_HEATMAP, SCAN_UNINDEXED

app = typer.Typer(
    name="scripts",
    help="The deterministic script layer: topics, weights, clusters, graph, scanner (no LLM).",
    no_args_is_help=True,
)
JSON = typer.Option(False, "--json", help="Print JSON.")
GAP = option(SCAN_UNINDEXED, "max_gap_minutes")


def _bar(disabled: bool) -> Progress:
    return progress_bar(
        TextColumn("{task.description:10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        quiet=disabled,
    )


def _names(items: list[str], limit: int = 6) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" … (+{len(items) - limit})" if len(items) > limit else "")


def describe(step: str, s: dict[str, Any]) -> str:
    """One line per step for people."""
    if step == "topics":
        line = f"{s['topics']} topics over {s['narratives']} narratives"
        if s["added"]:
            line += f"; added: {_names(s['added'])}"
        if s["removed"]:
            line += f"; removed: {_names(s['removed'])}"
        if s["resized"]:
            line += f"; {s['resized']} resized"
        return line
    if step == "weights":
        return (
            f"{s['weights_changed']} weights moved (max Δ {s['max_delta']:.4f}, mean Δ "
            f"{s['mean_delta']:.4f}); {s['recurrence_changed']} recurrence scores changed; "
            f"{s['deflated']} deflated; recent mean {s['recent_mean']}"
        )
    if step == "clusters":
        line = (
            f"k={s['k']}, {s['clustered']} narratives clustered, "
            f"{s['skipped_no_vector']} skipped (no vector)"
        )
        if s["added"]:
            line += f"; new labels: {_names(s['added'], 3)}"
        if s["removed"]:
            line += f"; gone: {_names(s['removed'], 3)}"
        return line + (f"; {s['note']}" if s.get("note") else "")
    if step == "graph":
        return (
            f"{s['entities']} entities, {s['pairs']} pairs, {s['stable_roles']} stable roles "
            f"from {s['narratives_with_roles']} narratives; {len(s['malformed'])} malformed parts"
        )
    return (
        f"{s['unlinked_narratives']} narratives without source links; "
        f"{s['unindexed_turns']} unindexed turns in {s['chunks']} chunks"
    )


def _run(steps: tuple[str, ...], json_out: bool, gap: float = 30.0) -> None:
    with open_app() as tl, _bar(json_out) as bar:
        tasks: dict[str, Any] = {}

        def progress(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total or 1)
            bar.update(tasks[step], completed=done if total else 1, total=total or 1)

        report = run_all(tl.memory, steps=steps, max_gap=timedelta(minutes=gap), progress=progress)
    if json_out:
        print_json(report.to_dict())
        return
    table = Table("step", "changed", "seconds", "summary")
    for step, summary in report.steps.items():
        changed = summary.get("changed", bool(summary.get("weights_changed")))
        if step == "scan":
            changed = "—"
        table.add_row(
            step, str(changed).lower(), f"{report.seconds[step]:.2f}", describe(step, summary)
        )
    console.print(table)
    graph = report.steps.get("graph")
    for bad in (graph or {}).get("malformed", []):
        err_console.print(
            styled(
                (f"narrative {bad['narrative_id']}:", "yellow"),
                f" entities_role part {bad['part']!r} skipped ({bad['reason']})",
            ),
            soft_wrap=True,
        )


@app.command("all")
def all_(json_out: bool = JSON, gap: float = GAP) -> None:
    """Run every step: topics, weights, clusters, graph, scan. Safe to run any time."""
    _run(("topics", "weights", "clusters", "graph", "scan"), json_out, gap)


@app.command()
def topics(json_out: bool = JSON) -> None:
    """Rebuild the keyword topic clusters."""
    _run(("topics",), json_out)


@app.command()
def recurrence(json_out: bool = JSON) -> None:
    """Refresh recurrence from today's tags, recompute weights, apply anti-inflation."""
    _run(("weights",), json_out)


@app.command()
def clusters(json_out: bool = JSON) -> None:
    """Rebuild the soft clusters from the stored narrative vectors."""
    _run(("clusters",), json_out)


@app.command()
def graph(
    dot: Path = typer.Option(None, "--dot", help="Also write a Graphviz DOT file here."),
    json_out: bool = JSON,
) -> None:
    """Rebuild the entity-role graph from every narrative's entities_role."""
    with open_app() as tl:
        entity_graph, report = rebuild_entity_graph(tl.memory)
    if dot is not None:
        dot.write_text(to_dot(entity_graph), encoding="utf-8")
    if json_out:
        print_json({"report": report.to_dict(), "graph": entity_graph.to_dict()})
    else:
        console.print(describe("graph", report.to_dict()))
        for s in entity_graph.stable_roles:
            console.print(f"  {s.entity} = {s.role} in {s.count}/{s.memories} memories")
        for bad in report.malformed:
            err_console.print(
                styled(
                    (f"narrative {bad['narrative_id']}:", "yellow"),
                    f" part {bad['part']!r} skipped ({bad['reason']})",
                ),
                soft_wrap=True,
            )
        if dot is not None:
            console.print(f"DOT written to {dot}")


@app.command()
@takes(SCAN_UNINDEXED)
def scan(json_out: bool = JSON, **args: Any) -> None:
    """Layer 0: narratives without source links and turns not yet in any narrative (markdown)."""
    with open_app() as tl:
        gap = timedelta(minutes=args["max_gap_minutes"])
        result = scan_unindexed(tl.memory, max_gap=gap, after=args["after"])
    if json_out:
        print_json(result.to_dict())
    else:
        typer.echo(result.to_markdown(max_chars=args["max_chars"]), nl=False)


@app.command()
def backfill(
    dry_run: bool = typer.Option(False, "--dry-run", help="Report, write nothing."),
    margin: float = typer.Option(0.1, help="How far the best turn must beat the runner-up."),
    json_out: bool = JSON,
) -> None:
    """Link narratives without source links to their most likely source turn."""
    with open_app() as tl:
        report = backfill_source_links(tl.memory, margin=margin, dry_run=dry_run)
    if json_out:
        print_json(report.to_dict())
        return
    verb = "would link" if dry_run else "linked"
    for d in report.decisions:
        if d.status == "linked":
            console.print(f"{verb} narrative {d.narrative_id} → turn {d.turn_id} ({d.score:.3f})")
        elif d.status == "ambiguous":
            console.print(
                f"left narrative {d.narrative_id}: turn {d.turn_id} ({d.score:.3f}) vs "
                f"{d.runner_up_id} ({d.runner_up_score:.3f}) too close"
            )
    console.print(
        f"{report.examined} narratives without links: {report.linked} {verb}, "
        f"{report.ambiguous} ambiguous, {report.no_candidate} without a candidate, "
        f"{report.no_vector} without a vector"
    )


@app.command()
@takes(ATTENTION_HEATMAP)
def heatmap(json_out: bool = JSON, **args: Any) -> None:
    """Retrieval hits per soft cluster, and the clusters never lit (attention deserts)."""
    with open_app() as tl:
        result = build_heatmap(tl.memory, **args)
    if json_out:
        print_json(result.to_dict())
        return
    table = Table("cluster", "label", "size", "hits", "share", "narratives hit")
    for c in result.clusters:
        table.add_row(
            str(c.cluster_id),
            c.label,
            str(c.size),
            str(c.hits),
            f"{c.share:.0%}",
            str(c.narratives_hit),
        )
    console.print(table)
    console.print(f"{result.total_hits} hits; {result.unclustered_hits} outside any cluster")
    if result.deserts:
        console.print(styled(("attention deserts", "bold"), " (never retrieved in this window):"))
        for c in result.deserts:
            console.print(f"  {c.cluster_id}: {c.label} ({c.size} narratives)")
    if result.note:
        err_console.print(styled(("note:", "yellow"), f" {result.note}"), soft_wrap=True)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="scripts")
    root.command("heatmap")(heatmap)
