"""DREAM: the daily LLM layer that turns the day's raw context into memory, and memory into a
self — solidify → sleep → scripts → comb → drift → dream, with run records, a token budget,
threads and the self-concept. See docs/dream.md.
"""

import typing as _typing

from tideline.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tideline.consolidate.dream._dream import (
        LAYERS,
        Dream,
        Layer,
        SelfConcept,
        choose_layers,
    )
    from tideline.consolidate.dream._dream_migrations import DREAM_MIGRATIONS
    from tideline.consolidate.dream._dream_prompts import (
        PromptInfo,
        RenderedPrompt,
        dream_prompt,
        list_prompts,
        render_prompt,
    )
    from tideline.consolidate.dream._dream_report import DreamReport, LayerReport
    from tideline.consolidate.dream._dream_runs import LAYER_NAMES, DreamRun, LayerRecord
    from tideline.consolidate.dream._layer_context import DreamLimits
    from tideline.consolidate.dream._thread_actions import ACTIONS as THREAD_ACTIONS
    from tideline.consolidate.dream._thread_actions import thread_action
    from tideline.consolidate.dream._threads import STATUSES as THREAD_STATUSES
    from tideline.consolidate.dream._threads import Thread
    from tideline.errors import DreamBusy

__all__ = [
    "DREAM_MIGRATIONS",
    "LAYERS",
    "LAYER_NAMES",
    "THREAD_ACTIONS",
    "THREAD_STATUSES",
    "Dream",
    "DreamBusy",
    "DreamLimits",
    "DreamReport",
    "DreamRun",
    "Layer",
    "LayerRecord",
    "LayerReport",
    "PromptInfo",
    "RenderedPrompt",
    "SelfConcept",
    "Thread",
    "choose_layers",
    "dream_prompt",
    "list_prompts",
    "render_prompt",
    "thread_action",
]

__getattr__, __dir__ = _lazy_exports(__name__)
