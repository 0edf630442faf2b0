"""Tideline: long-term memory for AI agents.

The core is usable as a library with no server running; the CLI (`tideline`, `memo`) and the MCP
server are thin drivers over it.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("tideline")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0"

__all__ = ["__version__"]
