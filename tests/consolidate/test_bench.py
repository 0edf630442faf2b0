"""bench/sleep_extraction.py runs end to end against the scripted server on one LoCoMo session."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.helpers import shared_data
from tests.llm.conftest import llm_settings
from tests.llm_server import LLMServer
from tideline.embed import Embedder

sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
import sleep_extraction


def test_one_session_is_extracted_and_scored(
    tmp_path: Path, server: LLMServer, e5: Embedder
) -> None:
    source = shared_data("locomo", "conv-26.json")
    data = tmp_path / "locomo"
    data.mkdir()
    (data / source.name).write_text(source.read_text())
    gold = json.loads(source.read_text())["session_1_observation"]["Caroline"][0]  # [text, "D1:3"]
    obs = {"type": "statement", "topic": "support group", "text": gold[0], "turns": [3]}
    told = json.loads(source.read_text())["events_session_1"]["Caroline"][0]  # dated 8 May, 2023
    events = [
        {"title": told, "turns": [3]},  # no time words: the day it was told, 8 May 2023
        {"title": "Caroline went hiking in the hills", "when": "last weekend", "turns": [3]},
    ]
    server.script(
        {"summary": "support group", "observations": [obs], "events": events}, step="extract"
    )
    settings = llm_settings(server.url, home=str(tmp_path / "home"))
    result = sleep_extraction.run(settings, data=data, conversations=1, sessions=1, embedder=e5)
    total = result["total"]
    assert total["sessions"] == 1 and total["reference"] == 7
    assert total["produced"] == 2  # the observation and the fact made from it
    assert total["precision_embedding"] == total["precision_evidence"] == 1.0
    assert total["recall_evidence"] == round(1 / 7, 3)
    assert total["evidence_link_accuracy"] == 1.0 and total["tokens_per_session"] > 0
    assert "| conv-26 |" in sleep_extraction.table(result)
    # time: the fact is valid from its turn in the session; one event of two is LoCoMo's, dated
    # right (the other is not one of LoCoMo's, so it costs precision, not recall)
    assert total["facts_in_session"] == 1.0
    assert (total["events_produced"], total["events_reference"]) == (2, 1)
    assert (total["event_date_precision"], total["event_date_recall"]) == (0.5, 1.0)
    assert "event_date_recall_week" in sleep_extraction.table(result, sleep_extraction.TIME)
