"""docs/export.md states every field the export writes: a reader without Tideline's code can
rely on it (a field added to a record without a word there fails here)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from tideline.app import Tideline

ROOT = Path(__file__).resolve().parents[1]


def test_every_exported_field_is_described(app: Tideline) -> None:
    app.memory.import_file(ROOT / "tests" / "data" / "peers" / "mem0.json")  # facts, evidence
    turn = app.memory.sync_turn("chat", "user", "I moved to Porto").id
    app.memory.write(gesture="The user moved to Porto", source_links=[turn])
    out = io.StringIO()
    app.export(out, "jsonl")
    doc = (ROOT / "docs" / "export.md").read_text()
    described = set(re.findall(r"`([a-z_]+)`", doc))
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds = {r["type"] for r in records}
    assert {"tideline-export", "session", "turn", "narrative", "fact", "snapshot"} <= kinds
    for record in records:
        fields = set(record) | {k for ev in record.get("evidence", []) for k in ev}
        assert fields <= described, f"{record['type']}: {sorted(fields - described)} undescribed"
        assert f"**{record['type']}**" in doc or record["type"] == "tideline-export"
