"""Example: Tideline as the memory provider of an agent runtime's plugin hook.

Runtimes such as Hermes Agent let a plugin add text to the system prompt at session start and to
the context before each turn. Wire the two `MemoryProvider` hooks to those points and keep every
turn with `sync_turn`:

    provider = TidelineMemoryProvider.from_env()
    system_prompt += provider.system_prompt_block()      # once, at session start
    context = provider.prefetch(user_message, session)   # every turn, before the model call
    provider.sync_turn(session, "user", user_message)    # every turn, both sides
    provider.sync_turn(session, "assistant", reply)

Run it to see both blocks for the memory in $TIDELINE_HOME:

    python examples/hermes_memory_provider.py "how is Anna doing?"
"""

from __future__ import annotations

import sys

from tideline.app import Tideline
from tideline.config import Settings


class TidelineMemoryProvider:
    """The runtime-facing object: the names a plugin layer calls, nothing else."""

    def __init__(self, app: Tideline):
        self.app = app
        self.hooks = app.provider

    @classmethod
    def from_env(cls) -> TidelineMemoryProvider:
        return cls(Tideline(Settings.load()))

    def system_prompt_block(self) -> str:
        return self.hooks.system_prompt_block()

    def prefetch(self, message: str, session: str | None = None) -> str:
        return self.hooks.prefetch(message, session)

    def sync_turn(self, session: str, role: str, text: str) -> None:
        """Keep the raw turn; a memory outage must not cost the agent its reply."""
        try:
            self.app.memory.sync_turn(session, role, text)
        except Exception as exc:  # log and carry on, as the runtime would
            print(f"tideline: turn not kept ({exc})", file=sys.stderr)

    def close(self) -> None:
        self.app.close()


if __name__ == "__main__":
    provider = TidelineMemoryProvider.from_env()
    try:
        print(provider.system_prompt_block())
        print()
        print(provider.prefetch(sys.argv[1] if len(sys.argv) > 1 else "what happened lately?"))
    finally:
        provider.close()
