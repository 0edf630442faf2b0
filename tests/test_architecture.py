"""The core never imports its drivers (CLI, MCP, web) or their frameworks."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "tideline"
DRIVERS = ("tideline.cli", "tideline.mcp", "tideline.web")
FRAMEWORKS = ("typer", "click", "rich", "mcp", "starlette", "uvicorn")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_core_does_not_import_drivers() -> None:
    bad = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).parts
        if rel[0] in ("cli", "mcp", "web", "__main__.py"):  # drivers and the `python -m` entry
            continue
        for name in _imports(path):
            if name.startswith(DRIVERS) or name.split(".")[0] in FRAMEWORKS:
                bad.append(f"{path.relative_to(SRC)} imports {name}")
    assert not bad, bad


def test_no_stdlib_sqlite3() -> None:
    offenders = [p for p in SRC.rglob("*.py") if "sqlite3" in _imports(p)]
    assert not offenders
