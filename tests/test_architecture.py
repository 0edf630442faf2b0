"""The architecture, checked: layers point down, drivers never import each other, no private
imports across units, frameworks only in the drivers, no stdlib sqlite3, environment only in
config, the wall clock only in clock (a service's clock never defaults to it), drivers choose
no lock (each service takes its own), no import cycles inside a unit.

A unit is `tideline.<name>` (a package or a root module). `violations(src)` walks every import of
every module under `src` — absolute, relative, inside functions and under TYPE_CHECKING — and
names each broken rule. The self-test plants one violation of each kind in a copy of the tree and
checks that the checker names it, so the rules cannot rot into always-green.
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "tideline"

#: docs/architecture.md, "Layers". A unit imports only units on lower layers; same-layer units are
#: peers and never import each other. A unit missing here is itself a violation.
LAYERS: dict[str, int] = {
    "tideline": 0,
    "tideline.errors": 0,
    "tideline.lazy": 0,  # package exports imported on first use (stdlib only)
    "tideline.clock": 1,  # the clock seam and the one stored time form (errors only)
    "tideline.config": 1,
    "tideline.http": 1,  # the one client of OpenAI-compatible APIs (embeddings, chat): httpx only
    "tideline.pathnames": 1,  # path arguments checked as names (errors only)
    "tideline.hookspecs": 2,
    "tideline.plugins": 3,
    "tideline.store": 4,
    "tideline.embed": 5,
    "tideline.search": 6,
    "tideline.llm": 6,  # a client for language models: config, errors, embed (token estimates)
    "tideline.memory": 7,
    "tideline.library": 7,
    "tideline.runs": 7,  # the run runner: lock, record, meter, step reports (store, llm)
    "tideline.analysis": 8,
    "tideline.profile": 8,
    "tideline.consolidate": 9,  # the Sleep pipeline and session memory: profile, memory, llm
    "tideline.inject": 10,  # may show the profile's snapshot and the session memory
    "tideline.fields": 11,
    "tideline.app": 11,
    # database upkeep: doctor (opens an app to probe it), repair (salvages what doctor found
    # damaged), migrate (between SQLite and PostgreSQL), the page reader and the table copy
    "tideline.upkeep": 12,
    "tideline.serve": 13,  # what the drivers share: the HTTP guard, tokens, wire helpers, listening
    "tideline.cli": 14,
    "tideline.mcp": 14,
    "tideline.web": 14,  # the REST API and the panel; serves the MCP endpoint beside them
    "tideline.hermes": 14,  # the Hermes Agent memory provider (hermes-agent's ABC) and installer
    "tideline.__main__": 15,
}

#: The edges against the order: `tideline serve` launches the MCP server (stdio) or the web
#: server (HTTP: the API and the panel, handed the MCP endpoint as a `tideline.serve.Endpoint`);
#: `tideline hermes install` writes the Hermes plugin.
ALLOWED = {
    ("tideline.cli.serve", "tideline.mcp"),
    ("tideline.cli.serve", "tideline.web"),
    ("tideline.cli.hermes", "tideline.hermes"),  # `tideline hermes install` runs its installer
}

#: Driver frameworks: only the drivers (and `python -m tideline`) import them.
FRAMEWORKS = {
    "typer",
    "click",
    "rich",
    "mcp",
    "mcp_types",
    "pydantic",
    "anyio",
    "uvicorn",
    "fastapi",
    "starlette",
    "jinja2",
    "openai",
    "agent",  # hermes-agent's top-level packages: only its provider imports them
    "plugins",
    "hermes_constants",
    "hermes_cli",
}
DRIVERS = {"tideline.cli", "tideline.mcp", "tideline.web", "tideline.hermes", "tideline.__main__"}
#: The drivers proper never import each other, whatever their layers (only ALLOWED's launcher):
#: what two of them need lives in `tideline.serve`, below them.
PEER_DRIVERS = {"tideline.cli", "tideline.mcp", "tideline.web", "tideline.hermes"}
#: Besides the drivers, the LLM client validates with pydantic (it speaks the OpenAI protocol
#: through `tideline.http`, not the openai package).
FRAMEWORK_USERS = {
    "tideline.llm": {"pydantic"},
    "tideline.consolidate": {"pydantic"},  # the schemas of the LLM steps' answers
    # the HTTP guard and listening (starlette, uvicorn, anyio), the drivers' pydantic fields;
    # never the MCP SDK, the web framework or the CLI's
    "tideline.serve": {"starlette", "uvicorn", "anyio", "pydantic"},
}

ENVIRON = {"environ", "getenv", "putenv"}
ENVIRON_OWNER = "tideline.config"
#: Reading the wall clock: `datetime.now()`, `dt.datetime.utcnow()`, `date.today()`, `time.time()`
#: (called or handed on), anywhere but the clock seam: services get a `Clock` passed down (a
#: replay moves it by hand), file freshness reads `clock.epoch_seconds`. Durations are not the
#: wall clock: `time.monotonic()` and `time.perf_counter()` are free to use.
WALL_CLOCK = {"now", "utcnow", "today"}
WALL_CLOCK_TIME = {"time", "time_ns"}
WALL_CLOCK_OWNER = "tideline.clock"
#: The one place a service's clock may default to `system_clock`: the composition root. Any other
#: constructor takes its `Clock` from the caller (a default would read the wall clock in a replay).
CLOCK_DEFAULT_OWNER = "tideline.app"

#: A driver chooses no lock: it neither passes one (`lock=`, a parameter `lock`) nor takes one of
#: the services' (`app.db_lock`, `app.library_lock`, `memory.lock`, a table of `locks`). Each
#: service serialises its own work (`Memory`, `Profile`, `Library`, the provider; the app opens
#: them under its lock). A driver's locks over its own state (its run list) have other names.
SERVICE_LOCKS = {"lock", "locks", "db_lock", "library_lock"}

#: No branching on the storage engine outside the engine seam: `store` (SQLite `Database`,
#: `PgDatabase`) and `search` (`TextIndex`, `PgTextIndex`) own what differs between engines, and
#: everyone else calls the same methods on either (#35 item 3: upkeep asked `isinstance`, the copy
#: and the run lock read `db.dialect`).
ENGINE_CLASSES = {"Database", "PgDatabase", "TextIndex", "SqliteTextIndex", "PgTextIndex"}
ENGINE_OWNERS = {"tideline.store", "tideline.search"}

#: Violations on main that the issue-10 branches remove, without line numbers. Each entry must
#: still be found (the list only shrinks): when a branch lands and fixes one, delete its line.
KNOWN: set[str] = set()


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. "tideline.search._index"
    target: str  # the module imported, resolved, e.g. "tideline.store"
    names: tuple[str, ...]  # names taken from it ("from x import a, b"); () for "import x"
    line: int


def _module_name(src: Path, path: Path) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([src.name, *parts])


def _is_package(src: Path, path: Path) -> bool:
    return path.name == "__init__.py"


def _modules(src: Path) -> dict[str, Path]:
    return {_module_name(src, p): p for p in sorted(src.rglob("*.py"))}


@functools.cache
def _nodes(text: str) -> tuple[ast.AST, ...]:
    """Every node of a module's source, parsed once per distinct text: a planted copy of the tree
    differs from the real one in one file, so its other ~270 files are not parsed again."""
    return tuple(ast.walk(ast.parse(text)))


def _imports(src: Path, modules: dict[str, Path]) -> Iterator[Import]:
    for name, path in modules.items():
        package = name if _is_package(src, path) else name.rpartition(".")[0]
        for node in _nodes(path.read_text()):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(name, alias.name, (), node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = package.split(".")
                    base_parts = base_parts[: len(base_parts) - node.level + 1]
                    base = ".".join([*base_parts, *([node.module] if node.module else [])])
                else:
                    base = node.module or ""
                plain: list[str] = []
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in modules:  # `from tideline import hookspecs`: the submodule
                        yield Import(name, sub, (), node.lineno)
                    else:
                        plain.append(alias.name)
                if plain:
                    yield Import(name, base, tuple(plain), node.lineno)


def _unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _private_module(module: str) -> bool:
    return any(p.startswith("_") and p != "__init__" for p in module.split(".")[2:])


def _environ_uses(path: Path) -> Iterator[int]:
    for node in _nodes(path.read_text()):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ENVIRON
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
        ):
            yield node.lineno
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(a.name in ENVIRON for a in node.names)
        ):
            yield node.lineno


def _wall_clock_uses(path: Path) -> Iterator[int]:
    for node in _nodes(path.read_text()):
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "time"
            and any(a.name in WALL_CLOCK_TIME for a in node.names)
        ):
            yield node.lineno
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        if node.attr in WALL_CLOCK and name in ("datetime", "date"):
            yield node.lineno
        if node.attr in WALL_CLOCK_TIME and name == "time":
            yield node.lineno


def _lock_choices(path: Path) -> Iterator[int]:
    """Where a driver passes a lock, takes a parameter `lock` or reaches for a service's lock."""
    for node in _nodes(path.read_text()):
        if isinstance(node, ast.keyword) and node.arg == "lock":
            yield node.value.lineno
        elif (isinstance(node, ast.arg) and node.arg == "lock") or (
            isinstance(node, ast.Attribute) and node.attr in SERVICE_LOCKS
        ):
            yield node.lineno


def _engine_branches(path: Path) -> Iterator[int]:
    """Where `isinstance` asks which engine a store or an index is, or `.dialect` is read."""
    for node in _nodes(path.read_text()):
        if isinstance(node, ast.Attribute) and node.attr == "dialect":
            yield node.lineno
            continue
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
        ):
            continue
        named = {
            n.id if isinstance(n, ast.Name) else n.attr
            for n in ast.walk(node.args[1])
            if isinstance(n, ast.Name | ast.Attribute)
        }
        if named & ENGINE_CLASSES:
            yield node.lineno


def _names_system_clock(node: ast.AST | None) -> bool:
    return (isinstance(node, ast.Name) and node.id == "system_clock") or (
        isinstance(node, ast.Attribute) and node.attr == "system_clock"
    )


def _clock_defaults(path: Path) -> Iterator[int]:
    """Where a parameter or a field defaults to `system_clock`."""
    for node in _nodes(path.read_text()):
        defaults: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            defaults = [*node.args.defaults, *node.args.kw_defaults]
        elif isinstance(node, ast.AnnAssign):
            defaults = [node.value]
        elif isinstance(node, ast.Call):
            defaults = [k.value for k in node.keywords if k.arg in ("default", "default_factory")]
        yield from (d.lineno for d in defaults if d is not None and _names_system_clock(d))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def violations(src: Path = SRC) -> list[str]:
    """Every broken rule, one line each: "<module>:<line> <what>"."""
    modules = _modules(src)
    found: list[str] = []
    units = {_unit(m) for m in modules}
    found += [f"{u}: unit missing from LAYERS" for u in sorted(units - LAYERS.keys())]
    graph: dict[str, set[str]] = {}
    for imp in _imports(src, modules):
        where = f"{imp.module}:{imp.line}"
        top = imp.target.split(".")[0]
        me = _unit(imp.module)
        if top == "sqlite3":
            found.append(f"{where} imports the stdlib sqlite3 (use tideline.store)")
        if top in FRAMEWORKS and me not in DRIVERS and top not in FRAMEWORK_USERS.get(me, ()):
            found.append(f"{where} imports the framework {top} outside the drivers")
        if top != "tideline":
            continue
        them = _unit(imp.target)
        if me == them:
            if imp.target in modules and imp.target != imp.module:
                graph.setdefault(imp.module, set()).add(imp.target)
            continue
        if (imp.module, them) in ALLOWED:
            pass
        elif me in PEER_DRIVERS and them in PEER_DRIVERS:
            found.append(
                f"{where} imports {imp.target}: drivers never import each other "
                "(share it through tideline.serve)"
            )
        elif me in LAYERS and them in LAYERS:
            if LAYERS[them] > LAYERS[me]:
                found.append(
                    f"{where} imports {imp.target}: layer {LAYERS[them]} is above {LAYERS[me]}"
                )
            elif LAYERS[them] == LAYERS[me]:
                found.append(f"{where} imports {imp.target}: peers never import each other")
        if _private_module(imp.target):
            found.append(f"{where} imports {imp.target}: a private module of another unit")
        private = [n for n in imp.names if n.startswith("_") and n != "__version__"]
        if private:
            found.append(f"{where} imports private {', '.join(private)} from {imp.target}")
    for name, path in modules.items():
        if name != ENVIRON_OWNER:
            found += [
                f"{name}:{n} reads the environment (only config does)" for n in _environ_uses(path)
            ]
    for name, path in modules.items():
        if _unit(name) != WALL_CLOCK_OWNER:
            found += [
                f"{name}:{n} reads the wall clock (take a Clock from tideline.clock)"
                for n in _wall_clock_uses(path)
            ]
        if _unit(name) != WALL_CLOCK_OWNER and name != CLOCK_DEFAULT_OWNER:
            found += [
                f"{name}:{n} defaults to the system clock (the caller passes its Clock)"
                for n in _clock_defaults(path)
            ]
    for name, path in modules.items():
        if _unit(name) in DRIVERS:
            found += [
                f"{name}:{n} chooses a lock (the service takes its own)"
                for n in _lock_choices(path)
            ]
    for name, path in modules.items():
        if _unit(name) not in ENGINE_OWNERS:
            found += [
                f"{name}:{n} branches on the storage engine (call the seam's method)"
                for n in _engine_branches(path)
            ]
    found += [f"import cycle: {' <-> '.join(c)}" for c in _cycles(graph)]
    return found


@functools.cache
def source_violations() -> tuple[str, ...]:
    """`violations` of the real tree, scanned once for every test that compares against it (each
    planted violation's test scans a copy of its own)."""
    return tuple(violations(SRC))


def _without_lines(found: list[str]) -> set[str]:
    return {re.sub(r"^(\S+):\d+ ", r"\1 ", v) for v in found}


def test_the_tree_keeps_the_architecture() -> None:
    found = _without_lines(list(source_violations()))
    assert not found - KNOWN, sorted(found - KNOWN)
    assert not KNOWN - found, f"fixed, delete from KNOWN: {sorted(KNOWN - found)}"


PLANTS = {
    "framework in the core": (
        "memory/_memory.py",
        "from mcp_types import Tool\n",
        "tideline.memory._memory:1 imports the framework mcp_types",
    ),
    "relative import upward": (
        "search/_index.py",
        "from ..cli import main\n",
        "tideline.search._index:1 imports tideline.cli.main: layer 14 is above 6",
    ),
    "pydantic in the store": (
        "store/_database.py",
        "import pydantic\n",
        "tideline.store._database:1 imports the framework pydantic",
    ),
    "store imports analysis": (
        "store/_migrations.py",
        "from tideline.analysis import run_all\n",
        "tideline.store._migrations:1 imports tideline.analysis: layer 8 is above 4",
    ),
    "private module of another unit": (
        "inject/_tiers.py",
        "from tideline.memory._narratives import Narratives\n",
        "tideline.inject._tiers:1 imports tideline.memory._narratives: a private module",
    ),
    "environment outside config": (
        "memory/_memory.py",
        "import os\nos.environ.get('X')\n",
        "tideline.memory._memory:2 reads the environment",
    ),
    "peer import": (
        "memory/_memory.py",
        "from tideline.library import Library\n",
        "tideline.memory._memory:1 imports tideline.library: peers never import each other",
    ),
    "driver imports a driver": (
        "web/api.py",
        "from tideline.mcp import MCP_PATH\n",
        "tideline.web.api:1 imports tideline.mcp: drivers never import each other",
    ),
    "the MCP SDK in what the drivers share": (
        "serve/_calls.py",
        "from mcp_types import Tool\n",
        "tideline.serve._calls:1 imports the framework mcp_types outside the drivers",
    ),
    "under TYPE_CHECKING": (
        "library/_library.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tideline.inject import Tier\n",
        "tideline.library._library:3 imports tideline.inject: layer 10 is above 7",
    ),
    "stdlib sqlite3": (
        "memory/_raw.py",
        "import sqlite3\n",
        "tideline.memory._raw:1 imports the stdlib sqlite3",
    ),
    "private name of another unit": (
        "library/_router.py",
        "from tideline.search import _fusion\nfrom tideline.store import _load_vec\n",
        "tideline.library._router:2 imports private _load_vec from tideline.store",
    ),
    "environment via from-import": (
        "search/_query.py",
        "from os import getenv\n",
        "tideline.search._query:1 reads the environment",
    ),
    "wall clock outside the seam": (
        "profile/_decay.py",
        "import datetime as dt\nSTART = dt.datetime.now(dt.UTC)\n",
        "tideline.profile._decay:2 reads the wall clock",
    ),
    "time.time outside the seam": (
        "consolidate/_sleep.py",
        "import time\nSTART = time.time()\n",
        "tideline.consolidate._sleep:2 reads the wall clock",
    ),
    "date.today outside the seam": (
        "memory/_dates.py",
        "import datetime\nTODAY = datetime.date.today()\n",
        "tideline.memory._dates:2 reads the wall clock",
    ),
    "time.time handed on as a clock": (
        "web/_session.py",
        "import time\nCLOCK = time.time\n",
        "tideline.web._session:2 reads the wall clock",
    ),
    "time.time imported by name": (
        "library/_heartbeat.py",
        "from time import time\n",
        "tideline.library._heartbeat:1 reads the wall clock",
    ),
    "a service defaulting to the system clock": (
        "memory/_raw.py",
        "from tideline.clock import system_clock\ndef f(clock=system_clock): ...\n",
        "tideline.memory._raw:2 defaults to the system clock",
    ),
    "a dataclass field defaulting to the system clock": (
        "consolidate/dream/_layer_context.py",
        "import dataclasses\nfrom tideline import clock\n"
        "X = dataclasses.field(default=clock.system_clock)\n",
        "tideline.consolidate.dream._layer_context:3 defaults to the system clock",
    ),
    "a driver taking the app's lock": (
        "web/api.py",
        "def f(app):\n    with app.db_lock:\n        return app.profile.runs(3)\n",
        "tideline.web.api:2 chooses a lock",
    ),
    "a driver passing a lock": (
        "mcp/memory_tools.py",
        "def f(server):\n    return server.call('memory_stats', None, lock='agent')\n",
        "tideline.mcp.memory_tools:2 chooses a lock",
    ),
    "a driver reaching for memory's lock": (
        "hermes/_provider.py",
        "def f(app):\n    with app.memory.lock:\n        pass\n",
        "tideline.hermes._provider:2 chooses a lock",
    ),
    "branching on the index's engine": (
        "upkeep/_repair.py",
        "from tideline.search import PgTextIndex\ndef f(i):\n    return isinstance(i, PgTextIndex)\n",
        "tideline.upkeep._repair:3 branches on the storage engine",
    ),
    "branching on the store's engine": (
        "upkeep/_migrate.py",
        "from tideline import store\nOK = lambda db: isinstance(db, (int, store.Database))\n",
        "tideline.upkeep._migrate:2 branches on the storage engine",
    ),
    "asking the store its dialect": (
        "upkeep/_copy.py",
        "def f(db):\n    return db.dialect == 'postgresql'\n",
        "tideline.upkeep._copy:2 branches on the storage engine",
    ),
    "asking the store its dialect in the run lock": (
        "runs/_lock.py",
        "def f(db):\n    return None if db.dialect == 'sqlite' else db\n",
        "tideline.runs._lock:2 branches on the storage engine",
    ),
    "unclassified unit": ("gui/__init__.py", "", "tideline.gui: unit missing from LAYERS"),
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_the_checker_names_each_planted_violation(tmp_path: Path, plant: str) -> None:
    where, code, expected = PLANTS[plant]
    tree = tmp_path / "tideline"
    shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("__pycache__"))
    target = tree / where
    target.parent.mkdir(exist_ok=True)
    target.write_text(code + (target.read_text() if target.exists() else ""))
    assert not any(expected in v for v in source_violations())
    assert any(expected in v for v in violations(tree)), (plant, violations(tree))


def test_the_checker_finds_a_cycle_inside_a_unit(tmp_path: Path) -> None:
    tree = tmp_path / "tideline"
    shutil.copytree(SRC, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "mcp" / "_ping.py").write_text("from tideline.mcp import _pong\n")
    (tree / "mcp" / "_pong.py").write_text("def f() -> None:\n    from . import _ping\n")
    assert "import cycle: tideline.mcp._ping <-> tideline.mcp._pong" in violations(tree)
