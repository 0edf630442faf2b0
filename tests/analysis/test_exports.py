"""The pure modules of the analysis package import only each other, the narrative rules of
`tideline.memory` and the stop words of `tideline.search`; the wired modules (database side) export their public names and import no
driver. (That `__all__` equals the public names is checked for every package in tests/test_exports.py.)"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import tideline.analysis

ANALYSIS = Path(tideline.analysis.__file__).parent
PURE = (
    "__init__",
    "entity_graph",
    "keywords",
    "soft_clusters",
    "timeline",
    "topics",
)
WIRED = ("attention", "backfill", "cluster_routing", "prefetch", "scanner", "scripts")
#: `tideline.search` for its stop-word lists, shared with the lexical analyser (issue 12);
#: `tideline.lazy` (stdlib only) for the package's exports imported on first use.
ALLOWED_PURE = ("tideline.analysis", "tideline.memory", "tideline.search", "tideline.lazy")
DRIVERS = ("tideline.cli", "tideline.mcp", "tideline.web", "typer", "click", "mcp")


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("name", WIRED)
def test_wired_modules_export_their_public_names(name: str) -> None:
    module = importlib.import_module(f"tideline.analysis.{name}")
    defined = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and getattr(v, "__module__", None) == module.__name__
    }
    assert defined <= set(module.__all__)
    assert all(hasattr(module, n) for n in module.__all__)


def test_pure_layer_imports_only_itself_and_the_narrative_rules() -> None:
    bad = []
    for path in (ANALYSIS / f"{m}.py" for m in PURE):
        bad += [
            f"{path.name}: {n}"
            for n in _imports(path)
            if n.startswith("tideline") and not n.startswith(ALLOWED_PURE)
        ]
    assert not bad


def test_every_module_is_classified_and_none_imports_a_driver() -> None:
    found = {p.stem for p in ANALYSIS.glob("*.py")}
    assert found == set(PURE) | set(WIRED) | {"_store"}
    bad = [
        f"{p.name}: {n}"
        for p in ANALYSIS.glob("*.py")
        for n in _imports(p)
        if n.split(".")[0] in DRIVERS or n.startswith(DRIVERS)
    ]
    assert not bad
