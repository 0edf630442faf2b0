"""Every exception class Tideline defines lives in `tideline.errors` (the one tree, with its fix-it
messages), and none derives from bare `Exception` but the tree's two roots. `ELSEWHERE` listed the
ones still outside while their packages were being edited; it is empty and only shrinks."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import tideline
from tideline import errors

ELSEWHERE: set[str] = set()  # every class is home (the list only shrinks: keep it empty)
ROOTS = {errors.TidelineError, errors.Signal}


def exception_classes(package: str = "tideline") -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of `package`, by its dotted name."""
    found: dict[str, type[BaseException]] = {}
    modules = pkgutil.walk_packages(tideline.__path__, f"{package}.")
    for info in modules:
        if info.name == "tideline.__main__":
            continue  # runs the CLI on import
        module = importlib.import_module(info.name)
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_every_exception_is_defined_in_errors() -> None:
    found = exception_classes()
    outside = {name for name in found if not name.startswith("tideline.errors.")}
    assert outside <= ELSEWHERE, sorted(outside - ELSEWHERE)
    assert outside >= ELSEWHERE, f"moved, delete from ELSEWHERE: {sorted(ELSEWHERE - outside)}"


def test_only_the_roots_derive_from_bare_exception() -> None:
    found = exception_classes()
    bare = {
        name
        for name, cls in found.items()
        if Exception in cls.__bases__ and cls not in ROOTS and name not in ELSEWHERE
    }
    assert bare == set()
    assert all(
        issubclass(cls, tuple(ROOTS)) for name, cls in found.items() if name not in ELSEWHERE
    )
