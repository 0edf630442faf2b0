"""The first hour: versions, shell completion, a query that starts with a dash, and error texts a
person can read. (MCP `serverInfo.version` is checked in tests/mcp/scenarios.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tideline
from tideline.cli.main import app as tideline_cli
from tideline.cli.memo import app as memo_cli

BIN = Path(sys.executable).parent


@pytest.mark.parametrize("cli", [tideline_cli, memo_cli])
def test_version(cli: object) -> None:
    done = CliRunner().invoke(cli, ["--version"])  # type: ignore[arg-type]
    assert done.exit_code == 0 and done.stdout == f"tideline {tideline.__version__}\n"
    assert tideline.__version__ != "0.0.0"  # installed, not read from a bare source tree


@pytest.mark.parametrize(
    ("script", "words", "expected"),
    [
        ("tideline", "tideline se", {"search", "serve", "sessions"}),
        ("memo", "memo re", {"reindex", "read"}),
    ],
)
def test_shell_completion_completes_commands(script: str, words: str, expected: set[str]) -> None:
    """What `--install-completion` installs asks the program itself; ask it the same way."""
    env = {
        **os.environ,
        "COMP_WORDS": words,
        "COMP_CWORD": "1",
        f"_{script.upper()}_COMPLETE": "complete_bash",
    }
    done = subprocess.run([BIN / script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and set(done.stdout.split()) == expected
    shown = subprocess.run(  # from a shell, as a person runs it: typer finds the shell in the
        ["bash", "-c", f"'{BIN / script}' --show-completion; exit $?"],  # tree, not $SHELL
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"_{script}_completion()" in shown.stdout


def test_a_query_may_start_with_a_dash(tmp_path: Path) -> None:
    done = CliRunner().invoke(tideline_cli, ["search", "-word", "--json"])
    assert "No such option" not in done.output and done.exit_code == 0
    done = CliRunner().invoke(tideline_cli, ["search", "--", "-k"])  # one that looks like -k
    assert done.exit_code == 1 and "nothing relevant found for '-k'" in done.stderr


def test_errors_are_grammatical(tmp_path: Path) -> None:
    done = CliRunner().invoke(
        tideline_cli, ["import", str(tmp_path / "nope.jsonl"), "-f", "openai"]
    )
    assert done.exit_code == 2
    assert "pass the path of an openai export" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def _make_plan(target: str, venv: Path) -> list[str]:
    """The commands `make -n <target>` would run with its venv at `venv`."""
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=Path(__file__).parents[1],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_make_run_installs_the_runtime_only_and_make_test_adds_the_dev_extra(
    tmp_path: Path,
) -> None:
    """`make run` starts a server: Playwright, mypy and ruff (the dev extra) are not needed for it.
    `make test` after it adds them to the same venv; after `make test`, `make run` installs
    nothing."""
    venv = tmp_path / "venv"
    run = _make_plan("run", venv)
    assert not [line for line in run if "[dev]" in line], run
    assert any(line.endswith("pip install -q -e .") for line in run), run
    (venv / "bin").mkdir(parents=True)  # as `make run` leaves it: a venv, the runtime stamp
    (venv / "bin" / "python").touch()
    (venv / ".installed-runtime").touch()
    test = _make_plan("test", venv)
    assert [line for line in test if "pip install" in line] == [
        f"{venv}/bin/pip install -q -e '.[dev]'"
    ], test
    (venv / ".installed-dev").touch()
    assert not [line for line in _make_plan("run", venv) if "pip" in line]
