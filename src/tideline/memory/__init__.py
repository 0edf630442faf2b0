"""Memory: raw context (sessions, turns, importers) and narratives (weights, tags, source links).

The narrative rules (the weight formula, recurrence, anti-inflation, tag normalisation and the
`entities_role` grammar) live here; the script layer (`tideline.analysis`) imports them.
"""

from tideline.memory._agent_migrations import AGENT_MIGRATIONS
from tideline.memory._backup import EXPORT_FORMATS, header, write_export
from tideline.memory._dates import date_window
from tideline.memory._entities import MalformedPart, parse_entities_role
from tideline.memory._forget import DEFAULT_WHY
from tideline.memory._memory import MAX_K, MAX_WINDOW, SEARCH_TURNS, Memory
from tideline.memory._narratives import (
    KINDS,
    MAX_ENTITIES_ROLE,
    MAX_GESTURE,
    MAX_TAG,
    MAX_TAGS,
    NARRATIVE_INDEX,
    NarrativeInput,
    Narratives,
)
from tideline.memory._narratives import MAX_TEXT as MAX_NARRATIVE_TEXT
from tideline.memory._question_time import present, turns_window
from tideline.memory._raw import (
    MAX_TURN_CHARS,
    TURN_CONTEXT,
    TURN_INDEX,
    NewTurn,
    RawContext,
    session_span,
    spelled_day,
    turn_times,
)
from tideline.memory._results import (
    FORGOTTEN,
    Forgetting,
    FoundFact,
    ImportedFact,
    ImportProblem,
    ImportSummary,
    Narrative,
    RestoredRecords,
    Trace,
    TraceTurn,
    Turn,
    TurnResult,
)
from tideline.memory._turn_keys import turn_keys
from tideline.memory._weights import (
    DEFAULT_CEILING,
    DEFAULT_WINDOW,
    WeightedNarrative,
    compute_weight,
    count_tag_sharers,
    deflate_recent,
    normalise_tag,
    raw_weight,
    recompute_weights,
    recurrence_from_count,
    refresh_recurrence,
)

__all__ = [
    "AGENT_MIGRATIONS",
    "DEFAULT_CEILING",
    "DEFAULT_WHY",
    "DEFAULT_WINDOW",
    "EXPORT_FORMATS",
    "FORGOTTEN",
    "KINDS",
    "MAX_ENTITIES_ROLE",
    "MAX_GESTURE",
    "MAX_K",
    "MAX_NARRATIVE_TEXT",
    "MAX_TAG",
    "MAX_TAGS",
    "MAX_TURN_CHARS",
    "MAX_WINDOW",
    "NARRATIVE_INDEX",
    "SEARCH_TURNS",
    "TURN_CONTEXT",
    "TURN_INDEX",
    "Forgetting",
    "FoundFact",
    "ImportProblem",
    "ImportSummary",
    "ImportedFact",
    "MalformedPart",
    "Memory",
    "Narrative",
    "NarrativeInput",
    "Narratives",
    "NewTurn",
    "RawContext",
    "RestoredRecords",
    "Trace",
    "TraceTurn",
    "Turn",
    "TurnResult",
    "WeightedNarrative",
    "compute_weight",
    "count_tag_sharers",
    "date_window",
    "deflate_recent",
    "header",
    "normalise_tag",
    "parse_entities_role",
    "present",
    "raw_weight",
    "recompute_weights",
    "recurrence_from_count",
    "refresh_recurrence",
    "session_span",
    "spelled_day",
    "turn_keys",
    "turn_times",
    "turns_window",
    "write_export",
]
