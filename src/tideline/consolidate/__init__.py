"""Consolidation: the Sleep pipeline (the seed's fourteen steps), its prompts and run records,
session memory, and the DREAM layers (`tideline.consolidate.dream`). Sits above `profile`,
`analysis` and `llm`; see docs/sleep.md and docs/dream.md.
"""

import typing as _typing

from tideline.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tideline.consolidate._prompts import Prompt, prompt
    from tideline.consolidate._session_memory import SessionContext, SessionLimits, SessionMemory
    from tideline.consolidate._sleep import LLM_STEPS, STEPS, Sleep, prompt_versions
    from tideline.consolidate._sleep_context import SleepLimits
    from tideline.consolidate._sleep_report import SleepReport, written
    from tideline.consolidate._summaries import CONSOLIDATE_MIGRATIONS
    from tideline.consolidate.dream import (
        DREAM_MIGRATIONS,
        Dream,
        DreamLimits,
        DreamReport,
        Thread,
        list_prompts,
        render_prompt,
    )
    from tideline.errors import DreamBusy, SleepBusy
    from tideline.runs import Step, StepEvent, StepReport

__all__ = [
    "CONSOLIDATE_MIGRATIONS",
    "DREAM_MIGRATIONS",
    "LLM_STEPS",
    "STEPS",
    "Dream",
    "DreamBusy",
    "DreamLimits",
    "DreamReport",
    "Prompt",
    "SessionContext",
    "SessionLimits",
    "SessionMemory",
    "Sleep",
    "SleepBusy",
    "SleepLimits",
    "SleepReport",
    "Step",
    "StepEvent",
    "StepReport",
    "Thread",
    "list_prompts",
    "prompt",
    "prompt_versions",
    "render_prompt",
    "written",
]

__getattr__, __dir__ = _lazy_exports(__name__)
