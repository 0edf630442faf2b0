"""What a step hands back to the runner: counts of what it changed and a one-line note."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Outcome:
    changes: dict[str, int] = field(default_factory=dict)
    note: str = ""
    status: str = "done"  # "done" | "skipped" (the step had nothing it could do)
