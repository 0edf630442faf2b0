"""The run runner: one run of a pipeline (Sleep, DREAM) — its lock, its record, its token meter,
its steps' reports and progress, `skipped` without an LLM, its status — kept one way; the
pipelines hand over their steps, and the script layer records its steps with `recorded`. See
docs/architecture.md.
"""

import typing as _typing

from tideline.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tideline.runs._lock import RunLock
    from tideline.runs._runner import (
        Book,
        Outcome,
        Progress,
        Runner,
        Step,
        StepEvent,
        StepReport,
        cut_note,
        recorded,
    )

__all__ = [
    "Book",
    "Outcome",
    "Progress",
    "RunLock",
    "Runner",
    "Step",
    "StepEvent",
    "StepReport",
    "cut_note",
    "recorded",
]

__getattr__, __dir__ = _lazy_exports(__name__)
