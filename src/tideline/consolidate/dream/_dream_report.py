"""What a dream run says about itself: one line per layer, tokens against the budget.

`LayerReport` is the runner's `StepReport` plus what the layer wrote (ids by kind) and its `detail`
(drift's seed and path, ...); the same progress events (`StepEvent`) carry it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tideline.runs import StepReport


@dataclass
class LayerReport(StepReport):
    written: dict[str, list[int]] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        out = super().line()
        ids = "; ".join(
            f"{k} {', '.join(f'#{i}' for i in v)}" for k, v in self.written.items() if v
        )
        return f"{out}  [{ids}]" if ids else out


@dataclass
class DreamReport:
    day: str
    run_id: int | None
    dry_run: bool = False
    status: str = "running"  # done | skipped (no LLM) | failed | stopped (budget) | planned
    llm: str = ""
    reason: str = ""  # why the run was skipped, said once
    layers: list[LayerReport] = field(default_factory=list)
    budget: int = 0
    tokens: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status in ("done", "planned")

    @property
    def tokens_in(self) -> int:
        return sum(r.tokens_in for r in self.layers)

    @property
    def tokens_out(self) -> int:
        return sum(r.tokens_out for r in self.layers)

    def layer(self, name: str) -> LayerReport:
        return next(r for r in self.layers if r.name == name)

    @property
    def written(self) -> dict[str, list[int]]:
        """Every id this run wrote, by kind, over all layers."""
        out: dict[str, list[int]] = {}
        for r in self.layers:
            for kind, ids in r.written.items():
                out.setdefault(kind, []).extend(ids)
        return out

    def lines(self) -> list[str]:
        head = f"dream {self.day} {'(dry run) ' if self.dry_run else ''}{self.status}"
        head += f" in {self.seconds:.2f}s"
        if self.run_id is not None:
            head += f" (run #{self.run_id})"
        if self.reason:
            head += f": {self.reason}"
        return [
            head,
            *(r.line() for r in self.layers),
            self.tokens_line(),
            *(f"error: {e}" for e in self.errors),
        ]

    def tokens_line(self) -> str:
        budget = f" of a {self.budget}-token budget" if self.budget else ""
        return f"tokens: {self.tokens_in} in, {self.tokens_out} out{budget}"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["tokens_in"], out["tokens_out"] = self.tokens_in, self.tokens_out
        out["written"] = self.written
        return out
