"""`tideline hermes install`: Hermes's own loader finds the plugin it writes, config.yaml keeps
the user's lines, a second run changes nothing, and `--uninstall` puts everything back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hermes.conftest import NO_HERMES

pytest.importorskip("agent.memory_provider", reason=NO_HERMES)

from plugins.memory import discover_memory_providers, load_memory_provider
from typer.testing import CliRunner

from tideline.cli.main import app
from tideline.hermes import TidelineProvider

CONFIG = """# my Hermes
model:
  default: some-model   # the one I pay for
memory:
  memory_enabled: true
  provider: holographic
display:
  compact: true
"""


def run(*args: str) -> CliRunner:
    return CliRunner().invoke(app, ["hermes", "install", *args], catch_exceptions=False)


def test_install_is_found_by_hermes_loader_and_undone(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(CONFIG)
    first = run("--hermes-home", str(hermes_home), "--json")
    assert first.exit_code == 0, first.output
    done = json.loads(first.output)
    assert done["provider"] == "tideline" and len(done["changed"]) == 3

    config = (hermes_home / "config.yaml").read_text()
    assert config == CONFIG.replace("provider: holographic", "provider: tideline")
    found = {name: ok for name, _, ok in discover_memory_providers()}
    assert found.get("tideline") is True
    assert isinstance(load_memory_provider("tideline"), TidelineProvider)

    again = run("--hermes-home", str(hermes_home))
    assert again.exit_code == 0 and "already installed in" in again.output

    gone = run("--hermes-home", str(hermes_home), "--uninstall")
    assert gone.exit_code == 0 and "memory.provider: holographic" in gone.output
    assert (hermes_home / "config.yaml").read_text() == CONFIG
    assert not (hermes_home / "plugins" / "tideline").exists()
    assert "already removed" in run("--hermes-home", str(hermes_home), "--uninstall").output


def test_a_fresh_home_gets_the_provider_line(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    assert run("--hermes-home", str(home)).exit_code == 0
    assert (home / "config.yaml").read_text() == "memory:\n  provider: tideline\n"
    assert run("--hermes-home", str(home), "--uninstall").exit_code == 0
    assert (home / "config.yaml").read_text() == 'memory:\n  provider: ""\n'


def test_no_config_prints_the_line_and_leaves_config_alone(hermes_home: Path) -> None:
    (hermes_home / "config.yaml").write_text(CONFIG)
    out = run("--hermes-home", str(hermes_home), "--no-config")
    assert "next: set memory.provider: tideline in" in out.output
    assert (hermes_home / "config.yaml").read_text() == CONFIG


@pytest.mark.parametrize(
    "text",
    ["memory: [oops\n", "memory: {provider: holographic}\n"],
)
def test_a_config_it_cannot_change_is_one_line_or_left_alone(hermes_home: Path, text: str) -> None:
    (hermes_home / "config.yaml").write_text(text)
    result = run("--hermes-home", str(hermes_home))
    if "oops" in text:
        assert result.exit_code != 0
        assert "fix its YAML" in result.output and len(result.output.strip().splitlines()) == 1
    else:
        assert "next: set memory.provider: tideline" in result.output
    assert (hermes_home / "config.yaml").read_text() == text


def test_the_entry_point_names_the_register_hook() -> None:
    from importlib.metadata import entry_points

    from plugins.memory import _ProviderCollector  # what Hermes hands a plugin's register()

    (point,) = entry_points(group="hermes_agent.memory_providers", name="tideline")
    collector = _ProviderCollector()
    point.load().register(collector)
    assert isinstance(collector.provider, TidelineProvider)
