"""The analysis package exports exactly its public names and imports no store or driver."""

from __future__ import annotations

import ast
from pathlib import Path

import tideline.analysis

ANALYSIS = Path(tideline.analysis.__file__).parent
ALLOWED_OURS = ("tideline.analysis", "tideline.weights")


def test_all_matches_public_names() -> None:
    module = tideline.analysis
    public = {n for n in vars(module) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(module, n)).__name__ == "module"}
    assert set(module.__all__) == public - submodules


def test_pure_layer_imports_only_itself_and_the_weight_formula() -> None:
    bad = []
    for path in [*ANALYSIS.rglob("*.py"), ANALYSIS.parent / "weights.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            bad += [
                f"{path.name}: {n}"
                for n in names
                if n.startswith("tideline") and not n.startswith(ALLOWED_OURS)
            ]
    assert not bad
