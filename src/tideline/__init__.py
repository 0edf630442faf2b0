"""Tideline: long-term memory for AI agents.

The core is usable as a library with no server running; the CLI (`tideline`, `memo`) and the MCP
server are thin drivers over it.
"""

from functools import cache as _cache

__all__ = ["__version__"]


@_cache
def _version() -> str:
    """The installed package's version (importlib.metadata costs ~0.1 s to import: only on
    first use, so a CLI search never pays it)."""
    from importlib import metadata

    try:
        return metadata.version("tideline")
    except metadata.PackageNotFoundError:  # running from a source tree
        return "0.0.0"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return _version()
    raise AttributeError(f"module 'tideline' has no attribute {name!r}")
