"""Plugin loading: built-in backends are default plugins; others come from entry points.

Entry points (group `tideline`) are loaded lazily, once, on first use — never at import time.
Which ones is the composition root's choice (`configure`, from the settings `plugins` and
`trace_plugins`); unconfigured, as in plain library use, every entry point loads and nothing is
traced. This module never reads the environment.
"""

from __future__ import annotations

import importlib.metadata
import logging
import sys
from collections.abc import Callable

import pluggy

from tideline import hookspecs

log = logging.getLogger(__name__)

DEFAULT_PLUGINS = ("tideline.embed._backends", "tideline.memory.importers._builtin")
ENTRY_POINT_GROUP = "tideline"
ALL = "*"

pm = pluggy.PluginManager("tideline")
pm.add_hookspecs(hookspecs)
_allow = ALL
_trace = False
_loaded = False
_untrace: Callable[[], None] | None = None


def configure(allow: str = ALL, trace: bool = False) -> None:
    """Choose the entry points (`*` all, "a,b" an allow-list, "" none) and hook tracing.

    Applied on the next `load_plugins()`; a change after loading registers or drops entry
    points to match, so two apps in one process with different settings stay correct.
    """
    global _allow, _trace, _loaded
    if (allow, trace) != (_allow, _trace):
        _allow, _trace, _loaded = allow, trace, False


def _allowed(name: str) -> bool:
    if _allow.strip() == ALL:
        return True
    return name in {p.strip() for p in _allow.split(",")}


def load_plugins() -> pluggy.PluginManager:
    """Register the defaults and the allowed entry-point plugins (idempotent)."""
    global _loaded, _untrace
    if _loaded:
        return pm
    _loaded = True
    for name in DEFAULT_PLUGINS:
        module = importlib.import_module(name)
        if not pm.is_registered(module):
            pm.register(module, name)
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        registered = pm.get_plugin(ep.name)
        if not _allowed(ep.name):
            if registered is not None:
                pm.unregister(registered, ep.name)
            continue
        if registered is not None:
            continue
        try:
            pm.register(ep.load(), ep.name)
        except Exception as exc:  # a broken plugin must not break Tideline
            log.warning("plugin %s failed to load (%s); skipped", ep.name, exc)
    if _trace and _untrace is None:
        pm.trace.root.setwriter(lambda msg: print(msg, file=sys.stderr, end=""))
        _untrace = pm.enable_tracing()
    elif not _trace and _untrace is not None:
        _untrace()
        _untrace = None
    return pm
