"""Memory: raw context (sessions, turns, importers) and narratives (weights, source links)."""

from tideline.memory._memory import Memory, TurnFusion
from tideline.memory._narratives import NarrativeInput
from tideline.memory._raw import NewTurn
from tideline.memory._schema import AGENT_MIGRATIONS, KINDS, NARRATIVE_INDEX, TURN_INDEX
from tideline.memory._types import (
    ImportProblem,
    ImportSummary,
    MemoryHit,
    Narrative,
    SearchResult,
    Trace,
    TraceTurn,
    Turn,
    TurnResult,
)

__all__ = [
    "AGENT_MIGRATIONS",
    "KINDS",
    "NARRATIVE_INDEX",
    "TURN_INDEX",
    "ImportProblem",
    "ImportSummary",
    "Memory",
    "MemoryHit",
    "Narrative",
    "NarrativeInput",
    "NewTurn",
    "SearchResult",
    "Trace",
    "TraceTurn",
    "Turn",
    "TurnFusion",
    "TurnResult",
]
