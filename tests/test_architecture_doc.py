"""docs/architecture.md's layer table is the architecture test's `LAYERS`: every unit on the
layer the checker enforces, none missing, none extra."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_architecture import LAYERS

DOC = Path(__file__).parents[1] / "docs" / "architecture.md"


def documented_layers(text: str) -> dict[str, int]:
    """The units of the "Layers" table, each with its layer: `search` → tideline.search."""
    found: dict[str, int] = {}
    for layer, units in re.findall(r"^\| (\d+) \| ([^|]+) \|", text, re.M):
        for unit in re.findall(r"`([\w.]+)`", re.sub(r"\(.*?\)", "", units)):
            found["tideline" if unit == "tideline" else f"tideline.{unit}"] = int(layer)
    return found


def test_the_documented_layers_are_the_checked_ones() -> None:
    assert documented_layers(DOC.read_text(encoding="utf-8")) == LAYERS


def test_a_unit_on_another_layer_in_the_document_is_found() -> None:
    text = DOC.read_text(encoding="utf-8")
    planted = text.replace("| 9 | `consolidate` |", "| 9 | `upkeep` |")
    assert planted != text
    assert documented_layers(planted) != LAYERS
    assert "tideline.consolidate" not in documented_layers(planted)
