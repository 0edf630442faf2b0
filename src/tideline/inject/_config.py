"""`InjectConfig`: the sizes, thresholds and per-tier token budgets. The composition root builds it
from `Settings` (`tideline.app.inject_config`: each field `<name>` is the setting `inject_<name>`,
each budget `inject_budget_<tier>`); it holds no default of its own."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from tideline.errors import ConfigError
from tideline.profile import EDGE_KINDS

TIERS = ("T0", "T1", "T1s", "T1p", "T1q", "T2", "T2b", "T3", "T4")
#: How T4 fuses the narratives' lexical and vector lists (`tideline.search.Policy.fusion`).
Fusion = Literal["rrf", "weighted"]
FUSIONS: tuple[Fusion, ...] = ("rrf", "weighted")
MAX_STRATEGIES = 2  # more than two questions in one turn crowd out the conversation


def edge_kinds(value: str | tuple[str, ...]) -> tuple[str, ...]:
    """`causes,related_to` → ("causes", "related_to"), each checked against the graph's kinds."""
    kinds = value.split(",") if isinstance(value, str) else value
    out = tuple(dict.fromkeys(k.strip() for k in kinds if k.strip()))
    unknown = [k for k in out if k not in EDGE_KINDS]
    if unknown:
        raise ConfigError(
            f"setting inject_graph_edges names unknown edge kinds {unknown}; "
            f"use a comma-separated list of {list(EDGE_KINDS)}"
        )
    return out


MIN_ITEM_TOKENS = 8  # an item trimmed below this says nothing; it is dropped instead


@dataclass(frozen=True)
class InjectConfig:
    """Every knob of T0–T4 (see docs/inject.md), from the settings."""

    soul_path: Path | None
    agent_name: str
    t0_soul: bool  # off: the runtime shows SOUL.md itself (Hermes)
    t0_reflections: int
    t1_recent_turns: int
    t1_k: int
    t4_trigger: int
    t4_k: int
    t4_fusion: Fusion
    t2_min_weight: float
    t2_k: int
    t3_clusters: int
    t3_threads: int
    item_tokens: int
    t0_snapshot_tokens: int
    t3_facts: int
    facts_k: int
    min_score: float  # pushing unasked needs more than search's floor
    graph_edges: tuple[str, ...]
    graph_k: int
    strategies_k: int
    budgets: dict[str, int]

    def __post_init__(self) -> None:
        counts = {
            "inject_t0_reflections": self.t0_reflections,
            "inject_t1_recent_turns": self.t1_recent_turns,
            "inject_t1_k": self.t1_k,
            "inject_t4_trigger": self.t4_trigger,
            "inject_t4_k": self.t4_k,
            "inject_t2_k": self.t2_k,
            "inject_t3_clusters": self.t3_clusters,
            "inject_t3_threads": self.t3_threads,
            "inject_item_tokens": self.item_tokens,
            "inject_t0_snapshot_tokens": self.t0_snapshot_tokens,
            "inject_t3_facts": self.t3_facts,
            "inject_facts_k": self.facts_k,
            "inject_graph_k": self.graph_k,
            "inject_strategies_k": self.strategies_k,
            **{f"inject_budget_{t.lower()}": self.budgets.get(t, 0) for t in TIERS},
        }
        for name, value in counts.items():
            if not 0 <= value <= 1_000_000:
                raise ConfigError(f"setting {name}={value} must be between 0 and 1,000,000")
        if self.strategies_k > MAX_STRATEGIES:
            raise ConfigError(
                f"setting inject_strategies_k={self.strategies_k} offers too many questions a "
                f"turn; use 0 to {MAX_STRATEGIES}"
            )
        edge_kinds(self.graph_edges)
        if not 0.0 <= self.t2_min_weight <= 1.0:
            raise ConfigError(
                f"setting inject_t2_min_weight={self.t2_min_weight} is a weight; "
                "use a value from 0 to 1 (default 0.6)"
            )
        if self.t4_fusion not in FUSIONS:
            raise ConfigError(
                f"setting inject_t4_fusion={self.t4_fusion!r} is unknown; use one of {list(FUSIONS)}"
            )
        missing = set(TIERS) - set(self.budgets)
        if missing:
            raise ConfigError(f"budgets for {sorted(missing)} are missing; give one per tier")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["soul_path"] = str(self.soul_path) if self.soul_path else None
        return data
