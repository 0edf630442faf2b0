"""One short conversation for the driver tests (CLI and MCP): the user moved to Osaka and works
as a nurse. Extraction finds two statements; the QUIET classify leaves them out, so both become
new facts, each with the user's turn as evidence."""

from __future__ import annotations

from typing import Any

from tests.consolidate.conftest import QUIET
from tests.llm_server import LLMServer

SESSION = "evening-chat"
USER = "I moved to Osaka last month and started as a nurse there."
REPLY = "Congratulations! How do you like Osaka?"


def extraction(turn: int) -> dict[str, Any]:
    """The extract step's answer for a session whose user turn is `turn`."""
    return {
        "summary": "Moved to Osaka, works as a nurse",
        "tags": ["moving", "work"],
        "observations": [
            {"type": "statement", "topic": "city", "text": "lives in Osaka", "turns": [turn]},
            {"type": "statement", "topic": "job", "text": "works as a nurse", "turns": [turn]},
        ],
    }


def script(server: LLMServer, turn: int) -> None:
    """Every step answers QUIET except extraction (a rerun gets the same answers)."""
    for step, answer in QUIET.items():
        server.default(step, answer)
    server.default("extract", extraction(turn))
