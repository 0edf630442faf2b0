"""Consolidation: the Sleep pipeline (the seed's fourteen steps), its prompts and run records,
and session memory. Sits above `profile` and `llm`; see docs/sleep.md.
"""

from tideline.consolidate._lock import SleepBusy
from tideline.consolidate._prompts import Prompt, prompt
from tideline.consolidate._report import SleepReport, StepEvent, StepReport
from tideline.consolidate._session_memory import SessionContext, SessionMemory
from tideline.consolidate._sleep import LLM_STEPS, STEPS, Sleep, Step, prompt_versions
from tideline.consolidate._summaries import CONSOLIDATE_MIGRATIONS

__all__ = [
    "CONSOLIDATE_MIGRATIONS",
    "LLM_STEPS",
    "STEPS",
    "Prompt",
    "SessionContext",
    "SessionMemory",
    "Sleep",
    "SleepBusy",
    "SleepReport",
    "Step",
    "StepEvent",
    "StepReport",
    "prompt",
    "prompt_versions",
]
