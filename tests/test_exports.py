"""Every package's `__all__` lists exactly its public names, and every listed name resolves.

Public means: not starting with "_", not a `__future__` feature and not a submodule (importing `tideline.x._y` binds `_y`,
importing a public submodule binds it too; neither is part of the API).
"""

from __future__ import annotations
import __future__

import importlib
import pkgutil
from types import ModuleType

import pytest

import tideline

PACKAGES = [
    "tideline",
    *sorted(
        m.name
        for m in pkgutil.walk_packages(tideline.__path__, "tideline.")
        if m.ispkg and not any(p.startswith("_") for p in m.name.split("."))
    ),
]

#: Packages the issue-10 branches still have to fix; delete a line when its branch lands.
KNOWN: set[str] = {
    # issue 9 fix-bad-input owns memory/importers: its __init__ binds Any, InvalidInput and
    # load_plugins (import them as private names, or move the registry into a _module)
    "tideline.memory.importers",
}


def problems(name: str) -> list[str]:
    module = importlib.import_module(name)
    listed = getattr(module, "__all__", None)
    if listed is None:
        return [f"{name} has no __all__"]
    public = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_") and not isinstance(v, ModuleType | __future__._Feature)
    }
    out = [
        f"{name}.__all__ lists {n!r}, which does not resolve"
        for n in listed
        if not hasattr(module, n)
    ]
    out += [f"{name}.__all__ misses public {n!r}" for n in sorted(public - set(listed))]
    out += [f"{name}.__all__ lists {n!r} twice" for n in set(listed) if listed.count(n) > 1]
    return out


@pytest.mark.parametrize("name", PACKAGES)
def test_all_lists_exactly_the_public_names(name: str) -> None:
    found = problems(name)
    if name in KNOWN:
        assert found, f"{name} is fixed: delete it from KNOWN"
    else:
        assert not found, found
