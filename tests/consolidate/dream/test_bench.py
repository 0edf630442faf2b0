"""bench/dream_day.py runs end to end on one LoCoMo session replayed as a day."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.helpers import shared_data

sys.path.insert(0, str(Path(__file__).parents[3] / "bench"))
import dream_day


def test_one_session_as_a_day_writes_every_kind_and_counts_tokens() -> None:
    shared_data("locomo", "conv-26.json")
    result = dream_day.run("conv-26", 1, "none", real=False)
    layers = {name: (tin, tout, written) for name, tin, tout, _, written, _ in result["layers"]}
    assert result["sessions"] == 1 and result["turns"] > 10
    assert layers["solidify"][2]["narratives"] and layers["dream"][2]["dreams"]
    assert layers["comb"][2]["reflections"] and layers["comb"][2]["threads"]
    assert result["total_in"] == sum(v[0] for v in layers.values()) > 0
    assert "| solidify |" in dream_day.table([result], "none")
