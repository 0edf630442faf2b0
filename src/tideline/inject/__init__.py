"""Injection T0–T4: the identity block at session start and the per-turn prefetch.

`MemoryProvider(memory, inject_config(settings))` (`tideline.app`) has the two hooks an agent runtime
calls: `system_prompt_block()` (T0 identity anchor, T2 prefetch cache, T2b context bridge, T3
memory map) and `prefetch(message)` (T1 session bridge, T4 active retrieval, attention logging).
Every tier is fitted to its own token budget and fenced as data; see docs/inject.md.
"""

from tideline.inject._block import Block, Item, Part, Section, unfenced
from tideline.inject._budget import TokenCounter, trim_to_tokens
from tideline.inject._config import (
    TIERS,
    Fusion,
    InjectConfig,
    edge_kinds,
)
from tideline.inject._fence import FENCE_CLOSE, FENCE_TAG, neutralise
from tideline.inject._memory_provider import MemoryProvider

__all__ = [
    "FENCE_CLOSE",
    "FENCE_TAG",
    "TIERS",
    "Block",
    "Fusion",
    "InjectConfig",
    "Item",
    "MemoryProvider",
    "Part",
    "Section",
    "TokenCounter",
    "edge_kinds",
    "neutralise",
    "trim_to_tokens",
    "unfenced",
]
