"""LoCoMo conversations: `session_N` lists of turns with `session_N_date_time` stamps.

Each LoCoMo session becomes a Tideline session `locomo/<sample>/session_<N>`. speaker_a is stored
with role "user", speaker_b with role "assistant", both with their names as speaker. LoCoMo dates a
session, not a turn, so turn i of a session is stamped session time + i minutes (order preserved).
A shared photo's caption is kept in the text as "[shares a photo: …]". `dia_id` (e.g. D3:7) is the
turn's external id, which the retrieval benchmark uses as ground truth.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from tideline.clock import to_text
from tideline.memory._raw import NewTurn
from tideline.memory._results import ImportProblem
from tideline.memory.importers._importer import (
    NOT_JSON,
    ImportBatch,
    ImportedSession,
    Origin,
    parse_json,
    read_text,
)

_SESSION = re.compile(r"^session_([0-9]{1,9})$")


def parse_locomo_time(text: str) -> dt.datetime:
    """'1:56 pm on 8 May, 2023' → datetime."""
    return dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")


def _session_start(value: object) -> dt.datetime | None:
    """A session's date, or None when it is missing, not text or not in LoCoMo's format."""
    if not isinstance(value, str):
        return None
    try:
        return parse_locomo_time(value)
    except ValueError:
        return None


class LoCoMoImporter:
    name = "locomo"
    description = "a LoCoMo conversation JSON file (snap-research/locomo)"

    def sniff(self, head: str) -> int:
        return 80 if '"speaker_a"' in head and '"session_1' in head else 0

    def read(self, path: Path) -> ImportBatch:
        batch = ImportBatch()
        data = parse_json(read_text(path), batch)
        if data is NOT_JSON:
            return batch
        conv = data.get("conversation", data) if isinstance(data, dict) else None
        if not isinstance(conv, dict) or not isinstance(conv.get("speaker_a"), str):
            batch.problems.append(
                ImportProblem(None, "not a LoCoMo conversation (no speaker_a name)")
            )
            return batch
        sample = str(data.get("sample_id") or path.stem)
        roles = {conv["speaker_a"]: "user"}
        if isinstance(conv.get("speaker_b"), str):
            roles[conv["speaker_b"]] = "assistant"
        sessions = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION.match(k)))
        for n, key in sessions:
            read = self._session(conv, n, key, roles, batch)
            if read is not None:
                turns, origins = read
                batch.sessions.append(
                    ImportedSession(
                        f"locomo/{sample}/session_{n}",
                        turns,
                        conv[f"session_{n}_date_time"],
                        origins,
                    )
                )
        return batch

    def _session(
        self, conv: dict[str, Any], n: int, key: str, roles: dict[str, str], batch: ImportBatch
    ) -> tuple[list[NewTurn], list[Origin]] | None:
        """One session's turns and where each came from, or None (with a problem recorded)
        when it cannot be read."""
        stamp_text = conv.get(f"session_{n}_date_time", "")
        start = _session_start(stamp_text)
        if start is None:
            batch.problems.append(
                ImportProblem(
                    None,
                    f"session_{n}: unreadable date {stamp_text!r:.80}; "
                    "write it like '1:56 pm on 8 May, 2023'",
                )
            )
            return None
        raw_turns = conv[key]
        if not isinstance(raw_turns, list):
            batch.problems.append(ImportProblem(None, f"{key}: not a list of turns"))
            return None
        turns = []
        origins: list[Origin] = []
        for i, raw in enumerate(raw_turns):
            if not isinstance(raw, dict):
                batch.problems.append(ImportProblem(None, f"{key} turn {i}: not an object"))
                continue
            text = str(raw.get("text", ""))
            if raw.get("blip_caption"):
                text = f"{text} [shares a photo: {raw['blip_caption']}]".strip()
            if not text.strip():
                batch.skip("turns without text")
                continue
            speaker = raw.get("speaker")
            try:
                stamp = to_text(start + dt.timedelta(minutes=i))
            except OverflowError:
                batch.problems.append(
                    ImportProblem(None, f"{key} turn {i}: its time falls after the year 9999")
                )
                continue
            turns.append(
                NewTurn(
                    role=roles.get(speaker, "user") if isinstance(speaker, str) else "user",
                    text=text,
                    speaker=speaker,
                    timestamp=stamp,
                    external_id=raw.get("dia_id"),
                )
            )
            origins.append(f"{key} turn {i}")
        return turns, origins
