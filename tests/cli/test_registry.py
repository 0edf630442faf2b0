"""The `tideline` command imports only what the command it runs needs: the registry names each
module's commands truly, and a `tideline search` never loads the servers, Sleep, DREAM, the
library or the HTTP client (issue 25: a CLI search within 1.5 s of process start)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import typer

from tideline.cli.main import app
from tideline.cli.registry import MODULES, app_for, build, owner

#: What a search must not import: the drivers it does not run, and the services it does not use.
#: (pydantic and rich are not among them: the search below prints with rich after a `write`;
#: a `--json` search imports neither, tested on its own.)
NOT_FOR_SEARCH = (
    "tideline.mcp",
    "tideline.web",
    "tideline.cli.serve",
    "tideline.cli.dream",
    "tideline.consolidate._sleep",
    "tideline.consolidate.dream._dream",
    "tideline.library._library",
    "tideline.llm",
    "tideline.analysis.entity_graph",  # the script layer: only its migrations are opened
    "tideline.analysis.soft_clusters",
    "tideline.analysis.topics",
    "tideline.profile._profile",  # the profile service: only its tables' migrations
    "tideline.http",
    "mcp",
    "fastapi",
    "uvicorn",
    "starlette",
    "httpx",
    "rich.progress",
)


def _names(app: typer.Typer) -> list[str]:
    return list(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_each_module_registers_exactly_the_commands_the_registry_names() -> None:
    for module, names in MODULES.items():
        assert sorted(_names(build([module]))) == sorted(names), module
    assert sorted(_names(app)) == sorted(n for names in MODULES.values() for n in names)


def test_a_call_builds_only_its_commands_module() -> None:
    assert owner(["search", "heron", "--json"]) == ["memory"]
    assert owner(["--version"]) == list(MODULES)  # no command: the full app answers
    assert owner(["serch", "heron"]) == list(MODULES)  # a typo: the full app suggests
    assert owner(["fact", "show", "3"]) == ["profile"]


def test_a_call_builds_only_the_command_it_names() -> None:
    for names in MODULES.values():
        for name in names:
            assert _names(app_for([name, "--help"])) == [name]
    assert sorted(_names(app_for(["--help"]))) == sorted(_names(app))
    assert sorted(_names(app_for(["serch"]))) == sorted(_names(app))  # a typo: all suggested


def test_a_json_search_builds_only_its_own_options_and_imports_neither_pydantic_nor_rich(
    tmp_path: Path,
) -> None:
    """Issue 34 (a CLI search within 0.8 s): typer turns the options of every command it builds
    into click's, and converts values through pydantic; printing JSON needs no rich."""
    script = (
        "import gc, json, sys\n"
        "from typer.core import TyperArgument, TyperOption\n"
        "sys.argv = ['tideline', 'search', 'heron', '-k', '3', '--mode', 'hybrid', '--json']\n"
        "from tideline.cli.registry import run\n"
        "try:\n    run()\n"
        "except SystemExit:  # its traceback keeps the app and what it built alive\n"
        "    built = [o for o in gc.get_objects() if isinstance(o, TyperOption | TyperArgument)]\n"
        "    print(json.dumps({'params': sorted({p.name for p in built}),\n"
        "                      'modules': sorted(sys.modules)}))\n"
    )
    env = {**os.environ, "TIDELINE_HOME": str(tmp_path), "TIDELINE_EMBEDDER": "none"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    *answer, report = done.stdout.strip().splitlines()
    assert json.loads("\n".join(answer))["hits"] == []  # the search ran: an empty memory
    seen = json.loads(report)
    search = typer.main.get_command(app).commands["search"]  # type: ignore[attr-defined]
    root = {"version", "help", "install_completion", "show_completion"}  # `tideline`'s own
    assert set(seen["params"]) == {p.name for p in search.params} | root
    wrong = [m for m in seen["modules"] if m.split(".")[0] in ("pydantic", "rich")]
    assert wrong == []


def test_a_search_does_not_import_the_servers_or_the_pipelines(tmp_path: Path) -> None:
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('\\n' + __import__('json').dumps(sorted(sys.modules))))\n"
        "sys.argv = ['tideline', 'write', 'The heron came back at dawn']\n"
        "from tideline.cli.registry import run\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        "sys.argv = ['tideline', 'search', 'heron', '--turns', '--json']\n"
        "run()\n"
    )
    env = {**os.environ, "TIDELINE_HOME": str(tmp_path), "TIDELINE_EMBEDDER": "none"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    *answer, imported = done.stdout.strip().splitlines()
    assert "heron" in "\n".join(answer)  # the search ran and found the turn
    modules = set(json.loads(imported))
    assert "tideline.memory" in modules
    wrong = [m for m in modules if any(m == n or m.startswith(n + ".") for n in NOT_FOR_SEARCH)]
    assert wrong == []
