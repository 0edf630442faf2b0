"""The entity graph's layout: nodes placed by a force layout, labels placed where they overlap
nothing, all computed here (offline, no script library), so the SVG only draws.

Nodes: Fruchterman–Reingold (edges pull, every pair pushes), started from a circle so the same
graph is always drawn the same way, then overlapping circles pushed apart. Labels: each label's
box is its text's width at the panel's 12px font, made exact in the browser by SVG `textLength`;
labels are placed biggest node first at the first of several spots around their node, further
out ring by ring, that overlaps no node, no label already placed and stays inside the picture.
A label that finds no spot makes the picture taller and the placing starts again, so labels
never overlap (tests/web/overlaps.py checks that for the tests).
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

import numpy as np

FONT = 12.0  # px: svg text in panel.css
LINE = 16.0  # a label box's height
GAP = 3.0  # between a label and what is near it
WIDTH = 720.0


@dataclass
class Box:
    x: float
    y: float
    w: float
    h: float

    def hits(self, other: Box) -> bool:
        return not (
            self.x + self.w <= other.x
            or other.x + other.w <= self.x
            or self.y + self.h <= other.y
            or other.y + other.h <= self.y
        )

    def hits_circle(self, cx: float, cy: float, r: float) -> bool:
        nx = min(max(cx, self.x), self.x + self.w)
        ny = min(max(cy, self.y), self.y + self.h)
        return (nx - cx) ** 2 + (ny - cy) ** 2 < r * r


def text_width(text: str) -> float:
    """The width of `text` at `FONT` px: wide (CJK, fullwidth) characters 1 em, capitals and
    digits 0.68 em, the rest 0.56 em; `textLength` makes the browser draw exactly this."""
    width = 0.0
    for ch in text:
        if unicodedata.east_asian_width(ch) in ("W", "F"):
            width += 1.0
        elif ch.isupper() or ch.isdigit() or ch in "mwMW@%&":
            width += 0.68
        elif ch in "il.,;:!'|ɪ ":
            width += 0.32
        else:
            width += 0.56
    return width * FONT


def fit(text: str, width: float) -> str:
    """`text` cut (with …) to draw within `width` px; empty when not even one letter fits."""
    text = " ".join(text.split())
    if text_width(text) <= width:
        return text
    while text and text_width(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…" if text.strip() else ""


def force_layout(n: int, edges: list[tuple[int, int, float]], iterations: int = 300) -> np.ndarray:
    """Positions in the unit square for `n` nodes and weighted `edges` (i, j, weight)."""
    if n == 0:
        return np.zeros((0, 2))
    angle = 2 * np.pi * np.arange(n) / n - np.pi / 2
    pos = 0.5 + 0.35 * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    if n == 1:
        return np.array([[0.5, 0.5]])
    k = math.sqrt(1.0 / n)
    heaviest = max((w for _, _, w in edges), default=1.0) or 1.0
    temperature = 0.1
    for _ in range(iterations):
        delta = pos[:, None, :] - pos[None, :, :]
        dist = np.maximum(np.linalg.norm(delta, axis=2), 1e-3)
        push = (k * k / dist**2)[:, :, None] * delta
        move = push.sum(axis=1)
        for i, j, w in edges:
            d = pos[i] - pos[j]
            pull = d * np.linalg.norm(d) / k * (0.5 + w / heaviest)
            move[i] -= pull
            move[j] += pull
        move += 0.5 - pos  # gravity: pieces that share no edge stay near the others
        length = np.maximum(np.linalg.norm(move, axis=1), 1e-9)[:, None]
        pos += move / length * np.minimum(length, temperature)
        temperature = max(0.002, temperature * 0.985)
    low, high = pos.min(axis=0), pos.max(axis=0)
    span = max(float((high - low).max()), 1e-9)  # one scale for both axes: the shape is kept
    return np.asarray((pos - (low + high) / 2) / span + 0.5)


def place(
    unit: np.ndarray, radii: list[float], labels: list[str], width: float = WIDTH
) -> tuple[list[tuple[float, float]], list[Box | None], float]:
    """Node centres, label boxes (None: no room at all) and the picture's height."""
    height = max(240.0, width * 0.62)
    for _ in range(8):
        centres = _spread(unit, radii, width, height)
        boxes = _labels(centres, radii, labels, width, height)
        if all(b is not None for b in boxes):
            return centres, boxes, height
        height *= 1.25
    return centres, boxes, height


def _spread(
    unit: np.ndarray, radii: list[float], width: float, height: float
) -> list[tuple[float, float]]:
    margin = 90.0  # room for the labels at the sides
    xy = np.empty_like(unit)
    xy[:, 0] = margin + unit[:, 0] * (width - 2 * margin)
    xy[:, 1] = 30 + unit[:, 1] * (height - 60)
    r = np.asarray(radii)
    for _ in range(60):  # push overlapping circles apart
        moved = False
        for i in range(len(xy)):
            for j in range(i + 1, len(xy)):
                d = xy[i] - xy[j]
                dist = float(np.linalg.norm(d)) or 1e-6
                need = r[i] + r[j] + 2 * GAP
                if dist < need:
                    shift = (d / dist if dist > 1e-6 else np.array([1.0, 0.0])) * (need - dist) / 2
                    xy[i] += shift
                    xy[j] -= shift
                    moved = True
        xy[:, 0] = np.clip(xy[:, 0], r + GAP, width - r - GAP)
        xy[:, 1] = np.clip(xy[:, 1], r + GAP, height - r - GAP)
        if not moved:
            break
    return [(float(x), float(y)) for x, y in xy]


def _labels(
    centres: list[tuple[float, float]],
    radii: list[float],
    labels: list[str],
    width: float,
    height: float,
) -> list[Box | None]:
    frame = Box(0, 0, width, height)
    placed: list[Box] = []
    boxes: list[Box | None] = [None] * len(labels)
    for i in sorted(range(len(labels)), key=lambda i: -radii[i]):
        (cx, cy), r, w = centres[i], radii[i], text_width(labels[i])
        for box in _spots(cx, cy, r, w):
            inside = box.x >= frame.x and box.y >= frame.y and box.x + box.w <= width
            if not inside or box.y + box.h > height:
                continue
            if any(box.hits(p) for p in placed):
                continue
            if any(box.hits_circle(x, y, rr + GAP) for (x, y), rr in zip(centres, radii, strict=True)):  # fmt: skip
                continue
            placed.append(box)
            boxes[i] = box
            break
    return boxes


def _spots(cx: float, cy: float, r: float, w: float) -> list[Box]:
    """Places for a `w`-wide label near a node, nearest first: right, left, above, below and
    the corners, then the same further out."""
    out = []
    for ring in range(6):
        d = r + GAP + ring * 10
        half = LINE / 2
        out += [
            Box(cx + d, cy - half, w, LINE),
            Box(cx - d - w, cy - half, w, LINE),
            Box(cx - w / 2, cy - d - LINE, w, LINE),
            Box(cx - w / 2, cy + d, w, LINE),
            Box(cx + d * 0.7, cy - d * 0.7 - LINE, w, LINE),
            Box(cx - d * 0.7 - w, cy - d * 0.7 - LINE, w, LINE),
            Box(cx + d * 0.7, cy + d * 0.7, w, LINE),
            Box(cx - d * 0.7 - w, cy + d * 0.7, w, LINE),
        ]
    return out
