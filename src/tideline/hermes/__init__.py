"""Tideline inside Hermes Agent: the memory provider Hermes loads, and its installer.

`TidelineProvider` subclasses Hermes's `MemoryProvider` (so importing it needs hermes-agent);
`register(ctx)` hands Hermes one (what the installed plugin and the `hermes_agent.memory_providers`
entry point call); `install` and `uninstall` write and remove `$HERMES_HOME/plugins/tideline/`
and need only the file system. See docs/hermes.md.
"""

import typing as _typing

from tideline.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tideline.hermes._home import default_hermes_home
    from tideline.hermes._install import Installed, install, uninstall
    from tideline.hermes._provider import TidelineProvider

__all__ = [
    "Installed",
    "TidelineProvider",
    "default_hermes_home",
    "install",
    "register",
    "uninstall",
]


def register(ctx: _typing.Any) -> None:
    """Hermes's plugin hook: hand it the provider (`ctx.register_memory_provider`)."""
    from tideline.clock import system_clock
    from tideline.hermes._provider import TidelineProvider

    ctx.register_memory_provider(TidelineProvider(clock=system_clock))


__getattr__, __dir__ = _lazy_exports(__name__)
