"""What a Sleep run says about itself: per-step status lines, what changed, tokens.

`SleepReport` is what `Sleep.run` returns and what drivers print (`lines()`) or serialise
(`to_dict()`); its `steps` are also what `sleep_runs.steps` stores.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tideline.runs import StepReport

#: What each kind of change writes, for people (singular, plural), in the order shown.
WRITTEN: dict[str, tuple[str, str]] = {
    "NewFact": ("new fact", "new facts"),
    "Link": ("evidence link", "evidence links"),
    "Transition": ("status change", "status changes"),
    "Merge": ("duplicate merged", "duplicates merged"),
    "Reopen": ("expiry withdrawn", "expiries withdrawn"),
    "Succession": ("successor named", "successors named"),
    "SetDecay": ("longer life", "longer lives"),
    "SetConfidence": ("confidence set", "confidences set"),
    "NewObservation": ("observation", "observations"),
    "ObservationsProcessed": ("observation batch integrated", "observation batches integrated"),
    "Mention": ("person mentioned", "people mentioned"),
    "NewEvent": ("event", "events"),
    "CloseEvent": ("event closed", "events closed"),
    "NewEdge": ("edge", "edges"),
    "NewStrategy": ("question", "questions"),
    "ReopenStrategy": ("lapse withdrawn", "lapses withdrawn"),
    "StrategyStatus": ("question settled", "questions settled"),
    "StrategyObsolete": ("question made obsolete", "questions made obsolete"),
    "UserModel": ("user-model reading", "user-model readings"),
    "NewTrajectory": ("trajectory", "trajectories"),
    "NewSnapshot": ("snapshot", "snapshots"),
    "RebuildSnapshot": ("snapshot", "snapshots"),
    "Digest": ("session summary", "session summaries"),
    "SessionProcessed": ("session processed", "sessions processed"),
}


def written(counts: dict[str, int]) -> str:
    """A changeset's changes by kind in words: "2 new facts, 1 snapshot, 1 session processed"."""
    order = list(WRITTEN)
    words: dict[str, int] = {}
    for kind in sorted(counts, key=lambda k: (order.index(k) if k in order else len(order), k)):
        one, many = WRITTEN.get(kind, (kind, kind))
        n = counts[kind]
        if n:
            words[one if n == 1 else many] = words.get(one if n == 1 else many, 0) + n
    return ", ".join(f"{n} {w}" for w, n in words.items()) or "nothing"


@dataclass
class SleepReport:
    run_id: int | None
    dry_run: bool = False
    status: str = "running"  # done | skipped (no LLM) | failed | aborted | planned | nothing
    llm: str = ""
    reason: str = ""  # why the run was skipped, said once
    steps: list[StepReport] = field(default_factory=list)
    post: list[StepReport] = field(default_factory=list)
    plan: dict[str, int] = field(default_factory=dict)  # the changeset's ops by kind
    applied: dict[str, int] = field(default_factory=dict)
    version: int | None = None
    tokens: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def skipped(self) -> dict[str, str]:
        """Steps that did not run, and why."""
        return {s.name: s.note for s in self.steps if s.status == "skipped"}

    @property
    def ok(self) -> bool:
        return self.status in ("done", "planned", "nothing")

    def lines(self) -> list[str]:
        head = f"sleep {'(dry run) ' if self.dry_run else ''}{self.status} in {self.seconds:.2f}s"
        if self.run_id is not None:
            head += f" (run #{self.run_id})"
        if self.reason:
            head += f": {self.reason}"
        out = [head, *(s.line() for s in self.steps), *(s.line() for s in self.post)]
        if self.plan:
            out.append(f"changes: {written(self.plan)}")
        if self.tokens.get("total_tokens"):
            out.append(
                f"tokens: {self.tokens['prompt_tokens']} in, {self.tokens['completion_tokens']} out"
                f" in {self.tokens['calls']} call(s)"
            )
        return out + self.notes + [f"error: {e}" for e in self.errors]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["skipped"] = self.skipped
        return out
