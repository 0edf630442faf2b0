"""Memory: raw context (sessions, turns, importers) and narratives (weights, tags, source links).

The narrative rules (the weight formula, recurrence, anti-inflation, tag normalisation and the
`entities_role` grammar) live here; the script layer (`tideline.analysis`) imports them.
"""

from tideline.memory._backup import EXPORT_FORMATS, header, write_export
from tideline.memory._dates import date_window
from tideline.memory._entities import MalformedPart, parse_entities_role
from tideline.memory._forget import DEFAULT_WHY
from tideline.memory._memory import MAX_K, MAX_WINDOW, NARRATIVES, TURNS, Memory
from tideline.memory._narratives import KINDS, NARRATIVE_INDEX, NarrativeInput, Narratives
from tideline.memory._raw import TURN_CONTEXT, TURN_INDEX, NewTurn, RawContext, spelled_day
from tideline.memory._schema import AGENT_MIGRATIONS
from tideline.memory._time import now, parse_time
from tideline.memory._turn_keys import turn_keys
from tideline.memory._types import (
    FORGOTTEN,
    Forgetting,
    ImportProblem,
    ImportSummary,
    Narrative,
    Trace,
    TraceTurn,
    Turn,
    TurnResult,
)
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
    "MAX_K",
    "MAX_WINDOW",
    "NARRATIVES",
    "NARRATIVE_INDEX",
    "TURNS",
    "TURN_CONTEXT",
    "TURN_INDEX",
    "Forgetting",
    "ImportProblem",
    "ImportSummary",
    "MalformedPart",
    "Memory",
    "Narrative",
    "NarrativeInput",
    "Narratives",
    "NewTurn",
    "RawContext",
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
    "now",
    "parse_entities_role",
    "parse_time",
    "raw_weight",
    "recompute_weights",
    "recurrence_from_count",
    "refresh_recurrence",
    "spelled_day",
    "turn_keys",
    "write_export",
]
