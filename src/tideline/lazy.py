"""Package exports imported on first use (PEP 562), so a command pays only for what it touches.

A package lists what it exports lazily as ordinary imports under `if _typing.TYPE_CHECKING:`
(so mypy and readers see the real names and types; `typing` and this function are imported under
private names, as they are no export) and ends with
`__getattr__, __dir__ = _lazy_exports(__name__)`: those imports, read from the package's own
source, are the table `__getattr__` answers from, importing the submodule on the first access.
`from tideline.consolidate import Sleep` works as before; `import tideline.consolidate` alone
no longer loads Sleep, DREAM, pydantic and the LLM client (issue 25: a CLI search's start-up).
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _table(source: str) -> dict[str, tuple[str, str]]:
    """Exported name → (module, attribute), from the `if TYPE_CHECKING:` imports of `source`."""
    table: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom) and imp.module and not imp.level:
                    for alias in imp.names:
                        table[alias.asname or alias.name] = (imp.module, alias.name)
    return table


def lazy_exports(package: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for the package named `package` (see the module docstring)."""
    module = sys.modules[package]
    table = _table(Path(str(module.__file__)).read_text("utf-8"))

    def __getattr__(name: str) -> object:
        try:
            where, attr = table[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(where), attr)
        setattr(module, name, value)  # the next access is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(module)) | set(table))

    return __getattr__, __dir__
