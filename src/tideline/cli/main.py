"""The `tideline` command with every command registered: `--help`, the tests and the generated
docs use this app; the installed command (`registry.run`) builds one with only the module the
call needs."""

from __future__ import annotations

from tideline.cli.registry import build

app = build()
