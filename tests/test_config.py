from __future__ import annotations

from pathlib import Path

import pytest

from tideline.config import SETTINGS, Settings
from tideline.errors import ConfigError


def test_defaults_follow_agent_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIDELINE_HOME")
    monkeypatch.delenv("TIDELINE_EMBED_CACHE")
    s = Settings.load(env={"AGENT_NAME": "hui"})
    assert s.home == Path("~/.tideline/hui").expanduser()
    assert s.db_path.name == "memory.db" and s.soul_path.name == "SOUL.md"
    assert s.cache_path == Path("~/.tideline/embed-cache.db").expanduser()


def test_precedence_override_env_file_default(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('embedder = "none"\nembed_batch = 8\nbusy_timeout_ms = 100\n')
    env = {"TIDELINE_CONFIG": str(cfg), "TIDELINE_EMBED_BATCH": "16"}
    s = Settings.load(env=env, overrides={"busy_timeout_ms": 7})
    assert (s.embedder, s.embed_batch, s.busy_timeout_ms) == ("none", 16, 7)


def test_bad_values_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"TIDELINE_EMBED_BATCH.*must be int"):
        Settings.load(env={"TIDELINE_EMBED_BATCH": "many"})
    cfg = tmp_path / "c.toml"
    cfg.write_text("embedder = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Settings.load(env={"TIDELINE_CONFIG": str(cfg)})
    cfg.write_text('embeder = "e5"\n')
    with pytest.raises(ConfigError, match="unknown key"):
        Settings.load(env={"TIDELINE_CONFIG": str(cfg)})


def test_every_setting_is_documented() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "configuration.md").read_text()
    for s in SETTINGS:
        assert f"`{s.env}`" in doc, f"{s.env} missing from docs/configuration.md"
