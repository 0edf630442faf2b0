"""Plugin loading: built-in backends are default plugins; others come from entry points.

Entry points (group `tideline`) are loaded lazily, once, on first use — never at import time.
`TIDELINE_PLUGINS` (comma-separated entry-point names) is an allow-list; set it to an empty value
to load none. `TIDELINE_TRACE_PLUGINS=1` logs every hook call.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import sys

import pluggy

from tideline import hookspecs

log = logging.getLogger(__name__)

DEFAULT_PLUGINS = ("tideline.embed._builtin", "tideline.memory.importers._builtin")
ENTRY_POINT_GROUP = "tideline"

pm = pluggy.PluginManager("tideline")
pm.add_hookspecs(hookspecs)
_loaded = False


def load_plugins() -> pluggy.PluginManager:
    """Register the defaults and the allowed entry-point plugins (idempotent)."""
    global _loaded
    if _loaded:
        return pm
    _loaded = True
    for name in DEFAULT_PLUGINS:
        module = importlib.import_module(name)
        if not pm.is_registered(module):
            pm.register(module, name)
    allow = os.environ.get("TIDELINE_PLUGINS")
    allowed = None if allow is None else {p.strip() for p in allow.split(",") if p.strip()}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if allowed is not None and ep.name not in allowed:
            continue
        try:
            pm.register(ep.load(), ep.name)
        except Exception as exc:  # a broken plugin must not break Tideline
            log.warning("plugin %s failed to load (%s); skipped", ep.name, exc)
    if os.environ.get("TIDELINE_TRACE_PLUGINS"):
        pm.trace.root.setwriter(lambda msg: print(msg, file=sys.stderr, end=""))
        pm.enable_tracing()
    return pm
