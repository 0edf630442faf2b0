"""LoCoMo conversations: `session_N` lists of turns with `session_N_date_time` stamps.

Each LoCoMo session becomes a Tideline session `locomo/<sample>/session_<N>`. speaker_a is stored
with role "user", speaker_b with role "assistant", both with their names as speaker. LoCoMo dates a
session, not a turn, so turn i of a session is stamped session time + i minutes (order preserved).
A shared photo's caption is kept in the text as "[shares a photo: …]". `dia_id` (e.g. D3:7) is the
turn's external id, which the retrieval benchmark uses as ground truth.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from tideline.memory._raw import NewTurn
from tideline.memory._time import to_iso
from tideline.memory._types import ImportProblem
from tideline.memory.importers._base import ImportBatch, ImportedSession

_SESSION = re.compile(r"^session_(\d+)$")


def parse_locomo_time(text: str) -> dt.datetime:
    """'1:56 pm on 8 May, 2023' → datetime."""
    return dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


class LoCoMoImporter:
    name = "locomo"
    description = "a LoCoMo conversation JSON file (snap-research/locomo)"

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            batch.problems.append(ImportProblem(exc.lineno, f"not valid JSON ({exc.msg})"))
            return batch
        conv = data.get("conversation", data) if isinstance(data, dict) else None
        if not isinstance(conv, dict) or "speaker_a" not in conv:
            batch.problems.append(ImportProblem(None, "not a LoCoMo conversation (no speaker_a)"))
            return batch
        sample = str(data.get("sample_id") or path.stem)
        roles = {conv["speaker_a"]: "user", conv.get("speaker_b"): "assistant"}
        numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.match(k)))
        for n in numbers:
            stamp_text = conv.get(f"session_{n}_date_time", "")
            try:
                start = parse_locomo_time(stamp_text)
            except ValueError:
                batch.problems.append(
                    ImportProblem(None, f"session_{n}: unreadable date {stamp_text!r}")
                )
                continue
            turns = []
            for i, raw in enumerate(conv[f"session_{n}"]):
                text = str(raw.get("text", ""))
                if raw.get("blip_caption"):
                    text = f"{text} [shares a photo: {raw['blip_caption']}]".strip()
                if not text.strip():
                    batch.skipped += 1
                    continue
                turns.append(
                    NewTurn(
                        role=roles.get(raw.get("speaker"), "user"),
                        text=text,
                        speaker=raw.get("speaker"),
                        timestamp=to_iso(start + dt.timedelta(minutes=i)),
                        external_id=raw.get("dia_id"),
                    )
                )
            batch.sessions.append(
                ImportedSession(f"locomo/{sample}/session_{n}", turns, title=stamp_text)
            )
        return batch
