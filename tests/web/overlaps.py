"""The oracle of the pictures' tests: which labels overlap each other or a node (the layout
itself only places labels; it never needs to list what overlaps)."""

from __future__ import annotations

from tideline.web._graph_layout import Box


def overlaps(
    centres: list[tuple[float, float]], radii: list[float], boxes: list[Box | None]
) -> list[tuple[int, int]]:
    """Pairs (label i, label j) or (label i, -1 - node j) that overlap: empty when drawn right."""
    found = []
    for i, a in enumerate(boxes):
        if a is None:
            continue
        found += [(i, j) for j, b in enumerate(boxes) if j > i and b is not None and a.hits(b)]
        found += [
            (i, -1 - j)
            for j, ((x, y), r) in enumerate(zip(centres, radii, strict=True))
            if a.hits_circle(x, y, r)
        ]
    return found
