"""Each package's `__all__` lists exactly its public names."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("name", ["tideline.store", "tideline.embed", "tideline.search"])
def test_all_matches_public_names(name: str) -> None:
    module = importlib.import_module(name)
    public = {n for n in vars(module) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(module, n)).__name__ == "module"}
    assert set(module.__all__) == public - submodules
