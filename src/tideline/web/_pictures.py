"""Geometry for the panel's pictures: bars for the attention heatmap, bubbles for the topic map,
a force layout for the entity graph (`_graph_layout`), dots for the weights over time. Plain numbers; the templates draw them as inline SVG (so
every label goes through the templates' escaping, and no JavaScript library is needed)."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

from tideline.clock import from_text
from tideline.web._graph_layout import FONT, WIDTH, fit, force_layout, place, text_width

BAR_H = 22
BAR_W = 420
LABEL_W = 260


def heat_bars(heat: dict[str, Any]) -> dict[str, Any]:
    """One bar per cluster, lit ones first by hits, then the deserts (drawn as empty, marked)."""
    rows = [*heat["clusters"], *heat["deserts"]]
    top = max((c["hits"] for c in rows), default=0) or 1
    bars = [
        {
            "y": i * BAR_H,
            "w": max(2.0, BAR_W * c["hits"] / top) if c["hits"] else BAR_W,
            "desert": not c["hits"],
            "label": fit(c["label"], LABEL_W - 12),
            "name": c["label"],
            "hits": c["hits"],
            "size": c["size"],
            "share": c["share"],
        }
        for i, c in enumerate(rows)
    ]
    return {"bars": bars, "height": max(BAR_H, len(bars) * BAR_H), "label_w": LABEL_W,
            "width": LABEL_W + BAR_W + 80}  # fmt: skip


def bubbles(topics: list[dict[str, Any]], width: int = 720) -> dict[str, Any]:
    """Topics as circles in rows, area by size, biggest first."""
    top = max((t["size"] for t in topics), default=1) or 1
    out, x, y, row_h = [], 0.0, 0.0, 0.0
    for t in sorted(topics, key=lambda t: -t["size"]):
        r = 14 + 36 * math.sqrt(t["size"] / top)
        if x + 2 * r > width:
            x, y, row_h = 0.0, y + row_h, 0.0
        out.append({"cx": x + r, "cy": y + r, "r": r, "label": fit(t["label"], 2 * r - 8),
                    "name": t["label"], "size": t["size"],
                    "keywords": ", ".join(t.get("keywords") or [])})  # fmt: skip
        x += 2 * r + 6
        row_h = max(row_h, 2 * r + 6)
    return {"bubbles": out, "width": width, "height": max(40.0, y + row_h)}


def graph_layout(graph: dict[str, Any], limit: int = 40, width: float = WIDTH) -> dict[str, Any]:
    """The `limit` entities in most memories, placed by a force layout with labels that overlap
    nothing (`_graph_layout`), radius by memories; edges between them, width by co-occurrence."""
    entities = graph["entities"][:limit]
    index = {e["name"]: i for i, e in enumerate(entities)}
    shown = [e for e in graph["edges"] if e["source"] in index and e["target"] in index]
    top = max((e["memories"] for e in entities), default=1) or 1
    radii = [5 + 13 * math.sqrt(e["memories"] / top) for e in entities]
    labels = [fit(e["name"], 180) for e in entities]
    unit = force_layout(
        len(entities), [(index[e["source"]], index[e["target"]], e["weight"]) for e in shown]
    )
    centres, boxes, height = place(unit, radii, labels, width)
    nodes = []
    for e, (x, y), r, label, box in zip(entities, centres, radii, labels, boxes, strict=True):
        roles = ", ".join(f"{role} ×{n}" for role, n in e["roles"].items())
        nodes.append({"x": x, "y": y, "r": r, "name": e["name"], "memories": e["memories"],
                      "roles": roles, "label": label if box else "",
                      "lx": box.x if box else 0, "ly": box.y + FONT if box else 0,
                      "lw": box.w if box else 0})  # fmt: skip
    heaviest = max((e["weight"] for e in shown), default=1) or 1
    edges = [
        {
            "x1": centres[index[e["source"]]][0],
            "y1": centres[index[e["source"]]][1],
            "x2": centres[index[e["target"]]][0],
            "y2": centres[index[e["target"]]][1],
            "w": 1 + 5 * e["weight"] / heaviest,
            "source": e["source"],
            "target": e["target"],
            "weight": e["weight"],
            "roles": "; ".join(
                f"{p['source_role']}–{p['target_role']} ×{p['count']}" for p in e["role_pairs"]
            ),
        }
        for e in shown
    ]
    unlabelled = [n["name"] for n in nodes if not n["label"]]
    return {"nodes": nodes, "edges": edges, "width": width, "height": height,
            "shown": len(nodes), "total": len(graph["entities"]), "unlabelled": unlabelled}  # fmt: skip


@dataclass
class Moment:
    """One memory on the weights picture: when it was said in the user's time (`said`: its
    source turns' latest timestamp) or, with no source turns, when it was written."""

    id: int
    at: str  # the stored time form
    said: bool
    weight: float
    gesture: str


def weight_dots(moments: list[Moment], width: int = 720, height: int = 240) -> dict[str, Any]:
    """Memories as dots: x when they were said (the user's time: an imported year spans its
    year), y how heavy now (0–1), so what the weights keep and let fade shows over time; a memory
    without source turns sits at when it was written, drawn hollow. Ticks at whole years,
    months, days or hours of the span."""
    if not moments:
        return {"dots": [], "width": width, "height": height, "ticks": []}
    times = [from_text(m.at) for m in moments]
    first, last = min(times), max(times)
    marks = time_ticks(first, last)
    start = min(first, marks[0][0])  # the axis begins at a whole year, month, day or hour
    span = (last - start).total_seconds()
    pad, left = 30, 40

    def x_of(t: dt.datetime) -> float:
        if not span:
            return width / 2
        return left + (width - left - pad) * (t - start).total_seconds() / span

    dots = [
        {"x": x_of(t), "y": height - pad - (height - 2 * pad) * max(0.0, min(1.0, m.weight)),
         "id": m.id, "weight": m.weight, "when": m.at[:10], "said": m.said, "gesture": m.gesture}
        for m, t in zip(moments, times, strict=True)
    ]  # fmt: skip
    _apart(dots, left, width - pad)
    ticks = _spaced([(x_of(t), label) for t, label in marks], width)
    return {"dots": dots, "width": width, "height": height, "pad": pad, "left": left,
            "ticks": ticks, "first": moments[times.index(first)].at[:10],
            "last": moments[times.index(last)].at[:10],
            "written": sum(not m.said for m in moments)}  # fmt: skip


def _spaced(marks: list[tuple[float, str]], width: float) -> list[dict[str, Any]]:
    """Tick labels that fit: centred on their tick, kept inside the picture, and a tick whose
    label would touch the one before it left out."""
    out: list[dict[str, Any]] = []
    end = -1.0
    for x, label in marks:
        w = text_width(label)
        anchor, left = "middle", x - w / 2
        if left < 0:
            anchor, left = "start", x
        elif left + w > width:
            anchor, left = "end", x - w
        if left < end + 8:
            continue
        out.append({"x": x, "label": label, "anchor": anchor})
        end = left + w
    return out


def _apart(dots: list[dict[str, Any]], low: float, high: float, r: float = 5.0) -> None:
    """Memories said at the same moment with the same weight would be one dot: set each such
    one beside the others (alternately left and right), so every memory shows."""
    placed: list[tuple[float, float]] = []
    for d in dots:
        x0, step = d["x"], 0
        while any((d["x"] - x) ** 2 + (d["y"] - y) ** 2 < (2 * r) ** 2 for x, y in placed):
            step += 1
            shift = 2 * r * ((step + 1) // 2) * (1 if step % 2 else -1)
            d["x"] = min(max(x0 + shift, low), high)
            if step > 4 * len(dots):  # no room left on the axis: let it overlap
                break
        placed.append((d["x"], d["y"]))


def time_ticks(first: dt.datetime, last: dt.datetime, most: int = 7) -> list[tuple[dt.datetime, str]]:  # fmt: skip
    """Tick times and labels from the whole year, month, day or hour (by the span) at or
    before `first` to `last`, at most `most` of them; one tick when the span is nothing."""
    days = (last - first).total_seconds() / 86400
    if days <= 0:
        return [(first, first.strftime("%Y-%m-%d"))]
    unit, form = (
        ("year", "%Y")
        if days >= 730
        else ("month", "%Y-%m")
        if days >= 60
        else ("day", "%Y-%m-%d")
        if days >= 2
        else ("hour", "%m-%d %H:%M")
    )
    marks = []
    t = _floor(first, unit)
    while t <= last:
        marks.append(t)
        t = _next(t, unit)
    step = max(1, math.ceil(len(marks) / most))
    chosen = marks[::step] or [first]
    return [(t, t.strftime(form)) for t in chosen]


def _floor(t: dt.datetime, unit: str) -> dt.datetime:
    if unit == "year":
        return t.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "month":
        return t.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        return t.replace(hour=0, minute=0, second=0, microsecond=0)
    return t.replace(minute=0, second=0, microsecond=0)


def _next(t: dt.datetime, unit: str) -> dt.datetime:
    if unit == "year":
        return t.replace(year=t.year + 1)
    if unit == "month":
        return t.replace(year=t.year + t.month // 12, month=t.month % 12 + 1)
    return t + (dt.timedelta(days=1) if unit == "day" else dt.timedelta(hours=1))
