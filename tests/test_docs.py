"""Every plugin hook is documented with an example."""

from __future__ import annotations

import inspect
from pathlib import Path

from tideline import hookspecs


def test_every_hook_is_documented() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "plugins.md").read_text()
    hooks = [
        n
        for n, f in inspect.getmembers(hookspecs, inspect.isfunction)
        if hasattr(f, "tideline_spec")
    ]
    assert hooks
    for name in hooks:
        assert f"### `{name}(" in doc and f"def {name}(" in doc
