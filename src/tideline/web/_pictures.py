"""Geometry for the panel's pictures: bars for the attention heatmap, bubbles for the topic map,
a circle layout for the entity graph, dots for the weights over time. Plain numbers; the templates draw them as inline SVG (so
every label goes through the templates' escaping, and no JavaScript library is needed)."""

from __future__ import annotations

import math
from typing import Any

from tideline.clock import from_text

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
            "label": c["label"],
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
        out.append({"cx": x + r, "cy": y + r, "r": r, "label": t["label"], "size": t["size"],
                    "keywords": ", ".join(t.get("keywords") or [])})  # fmt: skip
        x += 2 * r + 6
        row_h = max(row_h, 2 * r + 6)
    return {"bubbles": out, "width": width, "height": max(40.0, y + row_h)}


def circle_layout(graph: dict[str, Any], size: int = 560, limit: int = 40) -> dict[str, Any]:
    """The `limit` entities in most memories on a circle, radius by memories, edges between
    them with width by co-occurrence."""
    entities = graph["entities"][:limit]
    centre, ring = size / 2, size / 2 - 60
    top = max((e["memories"] for e in entities), default=1) or 1
    where: dict[str, tuple[float, float]] = {}
    nodes = []
    for i, e in enumerate(entities):
        angle = 2 * math.pi * i / max(1, len(entities)) - math.pi / 2
        x, y = centre + ring * math.cos(angle), centre + ring * math.sin(angle)
        where[e["name"]] = (x, y)
        roles = ", ".join(f"{r} ×{n}" for r, n in e["roles"].items())
        nodes.append({"x": x, "y": y, "r": 5 + 13 * math.sqrt(e["memories"] / top),
                      "name": e["name"], "memories": e["memories"], "roles": roles,
                      "anchor": "start" if math.cos(angle) >= 0 else "end",
                      "dx": 10 if math.cos(angle) >= 0 else -10})  # fmt: skip
    heaviest = max((e["weight"] for e in graph["edges"]), default=1) or 1
    edges = [
        {
            "x1": where[e["source"]][0],
            "y1": where[e["source"]][1],
            "x2": where[e["target"]][0],
            "y2": where[e["target"]][1],
            "w": 1 + 5 * e["weight"] / heaviest,
            "source": e["source"],
            "target": e["target"],
            "weight": e["weight"],
            "roles": "; ".join(
                f"{p['source_role']}–{p['target_role']} ×{p['count']}" for p in e["role_pairs"]
            ),
        }
        for e in graph["edges"]
        if e["source"] in where and e["target"] in where
    ]
    return {"nodes": nodes, "edges": edges, "size": size, "shown": len(nodes),
            "total": len(graph["entities"])}  # fmt: skip


def weight_dots(
    points: list[tuple[int, str, float, str]], width: int = 720, height: int = 220
) -> dict[str, Any]:
    """Narratives as dots: written when (x, by time) and how heavy now (y, 0–1), so what the
    weights keep and let fade shows over time. `points`: (id, created_at, weight, gesture)."""
    if not points:
        return {"dots": [], "width": width, "height": height}
    stamps = [from_text(p[1]).timestamp() for p in points]
    first, last = min(stamps), max(stamps)
    span = (last - first) or 1.0
    pad = 30
    dots = [
        {
            "x": pad + (width - 2 * pad) * (t - first) / span,
            "y": height - pad - (height - 2 * pad) * max(0.0, min(1.0, weight)),
            "id": nid,
            "weight": weight,
            "when": created[:10],
            "gesture": gesture,
        }
        for (nid, created, weight, gesture), t in zip(points, stamps, strict=True)
    ]
    return {"dots": dots, "width": width, "height": height, "pad": pad,
            "first": points[stamps.index(first)][1][:10],
            "last": points[stamps.index(last)][1][:10]}  # fmt: skip
