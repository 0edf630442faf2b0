"""Token accounting for one pipeline run: totals per step, an optional budget and a call cap.

A run (one sleep, one dream) owns one `TokenMeter` and passes it to every `complete` call. The
budget is checked *before* each request against the worst case (estimated prompt + the answer's
max_tokens), and so is the cap on calls, so a run stops cleanly with `BudgetExceeded` instead of
overspending by one call. A run takes in work (a session to extract) only while `intake_open`:
under half its calls and half its budget, so the steps after the intake have the rest.

`on_record` (set by the runner) hears every request's usage as soon as it is answered: a run
killed mid-way has recorded what it spent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from tideline.errors import BudgetExceeded
from tideline.llm._messages import Usage


class TokenMeter:
    """Per-step and total token usage of a run; `budget` 0 means no limit."""

    def __init__(self, budget: int = 0, max_calls: int = 0) -> None:
        self.budget = max(0, budget)
        self.max_calls = max(0, max_calls)
        self.calls = 0
        self.on_record: Callable[[TokenMeter], None] | None = None
        self._steps: dict[str, Usage] = {}
        self._lock = threading.Lock()  # steps may run their calls in parallel threads

    @property
    def total(self) -> Usage:
        with self._lock:
            return sum(self._steps.values(), Usage())

    @property
    def steps(self) -> dict[str, Usage]:
        """A copy of the per-step totals, in the order the steps first spent tokens."""
        with self._lock:
            return dict(self._steps)

    def check(self, step: str, prompt_tokens: int, max_tokens: int) -> None:
        """Raise `BudgetExceeded` if a call of this size could take the run past its budget, or
        the run has made all the calls it may."""
        if self.max_calls and self.calls >= self.max_calls:
            raise BudgetExceeded(
                f"step {step!r}: the run has made the {self.max_calls} LLM calls it may "
                "(TIDELINE_LLM_RUN_MAX_CALLS); raise it or give the run less to do"
            )
        if not self.budget:
            return
        spent = self.total.total
        need = prompt_tokens + max_tokens
        if spent + need > self.budget:
            raise BudgetExceeded(
                f"step {step!r} needs up to {need} tokens (~{prompt_tokens} prompt + "
                f"{max_tokens} answer) but the run has {max(0, self.budget - spent)} of its "
                f"{self.budget}-token budget left; raise TIDELINE_LLM_RUN_BUDGET or give the run "
                "less to do"
            )

    def record(self, step: str, usage: Usage) -> None:
        """Add one request's usage to its step."""
        with self._lock:
            self.calls += 1
            self._steps[step] = self._steps.get(step, Usage()) + usage
        if self.on_record is not None:
            self.on_record(self)

    def intake_open(self, calls_ahead: int = 0) -> bool:
        """May the run take in more work? Under half its call cap (counting `calls_ahead`, the
        calls the work taken in so far will still need) and under half its token budget."""
        if self.max_calls and 2 * (self.calls + calls_ahead) >= self.max_calls:
            return False
        return not self.budget or 2 * self.total.total < self.budget

    def summary(self) -> dict[str, object]:
        """A JSON-ready record for run reports: totals, per step, budget."""
        steps = self.steps
        total = sum(steps.values(), Usage())
        return {
            "calls": self.calls,
            "prompt_tokens": total.prompt_tokens,
            "completion_tokens": total.completion_tokens,
            "total_tokens": total.total,
            "estimated": total.estimated,
            "budget": self.budget or None,
            "max_calls": self.max_calls or None,
            "steps": {
                name: {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}
                for name, u in steps.items()
            },
        }
