from __future__ import annotations

from pathlib import Path

import pytest

from tideline.config import Settings
from tideline.errors import ConfigError


def test_defaults_follow_agent_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIDELINE_HOME")
    monkeypatch.delenv("TIDELINE_EMBED_CACHE")
    s = Settings.load(env={"AGENT_NAME": "hui"})
    assert s.home == Path("~/.tideline/hui").expanduser()
    assert s.db_path.name == "memory.db" and s.soul_path.name == "SOUL.md"
    assert s.cache_path == Path("~/.tideline/embed-cache.db").expanduser()


def test_a_home_set_elsewhere_keeps_the_embedding_cache_inside(tmp_path: Path) -> None:
    """TIDELINE_HOME=/x/fresh wrote the cache into /x/ (the home's parent, the user's folder)."""
    fresh = tmp_path / "x" / "fresh"
    s = Settings.load(env={"TIDELINE_HOME": str(fresh)})
    assert s.cache_path == fresh / "embed-cache.db"
    under = Settings.load(env={"TIDELINE_HOME": "~/.tideline/kai", "AGENT_NAME": "kai"})
    assert under.cache_path == Path("~/.tideline/embed-cache.db").expanduser()  # shared there
    chosen = Settings.load(env={"TIDELINE_HOME": str(fresh), "TIDELINE_EMBED_CACHE": "/c/e.db"})
    assert chosen.cache_path == Path("/c/e.db")


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


@pytest.mark.parametrize(
    ("raw", "value"),
    [("0", False), ("false", False), ("No", False), ("off", False), ("1", True), ("yes", True)],
)
def test_booleans_are_parsed_not_truthy(raw: str, value: bool) -> None:
    assert Settings.load(env={"TIDELINE_TRACE_PLUGINS": raw}).trace_plugins is value


def test_a_bad_boolean_is_a_one_line_error() -> None:
    with pytest.raises(ConfigError, match=r"TIDELINE_TRACE_PLUGINS.*true or false"):
        Settings.load(env={"TIDELINE_TRACE_PLUGINS": "maybe"})


def test_an_empty_plugin_list_means_none_and_config_toml_reaches_every_setting(
    tmp_path: Path,
) -> None:
    assert Settings.load(env={}).plugins == "*"  # unset: every entry point
    assert Settings.load(env={"TIDELINE_PLUGINS": ""}).plugins == ""  # set but empty: none
    assert Settings.load(env={"TIDELINE_EMBEDDER": ""}).embedder == "e5"  # empty is unset
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'plugins = ""\ntrace_plugins = true\ntoken = "t0k"\nlibrary_rrf_k = 30\n'
        'inject_t4_fusion = "weighted"\n'
    )
    s = Settings.load(env={"TIDELINE_CONFIG": str(cfg)})
    assert (s.plugins, s.trace_plugins, s.token) == ("", True, "t0k")
    assert (s.library_rrf_k, s.inject_t4_fusion) == (30, "weighted")


def test_the_composition_root_configures_plugin_tracing(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    from dataclasses import replace

    from tideline import plugins
    from tideline.app import Tideline

    try:
        Tideline(replace(settings, trace_plugins=True))
        plugins.load_plugins().hook.register_embedders(register=lambda name, factory: None)
        assert "register_embedders" in capsys.readouterr().err
        Tideline(settings)
        plugins.load_plugins().hook.register_embedders(register=lambda name, factory: None)
        assert "register_embedders" not in capsys.readouterr().err
    finally:
        plugins.configure()
