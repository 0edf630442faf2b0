"""Settings: one declarative list, read from env vars and a TOML config file.

Precedence: explicit overrides > environment > config file > default. The config file is
`TIDELINE_CONFIG` if set, else `<home>/config.toml`; its keys are the setting names
(`embedder = "openai"`). Entry points (CLI, MCP server) call `Settings.load()` once and pass the
result down; core code never reads the environment itself.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tideline.errors import ConfigError


@dataclass(frozen=True)
class Setting:
    """One setting: its name, env var, default and the help shown in docs and `doctor`."""

    name: str
    env: str
    default: Any
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "agent_name", "AGENT_NAME", "agent", "Name of the agent; names its home and its tools."
    ),
    Setting("home", "TIDELINE_HOME", "", "Agent home folder (default ~/.tideline/<agent_name>)."),
    Setting(
        "embedder", "TIDELINE_EMBEDDER", "e5", "Embedding backend: e5, openai, none or a plugin."
    ),
    Setting("embed_url", "TIDELINE_EMBED_URL", "", "Base URL of an OpenAI-compatible API (…/v1)."),
    Setting("embed_model", "TIDELINE_EMBED_MODEL", "", "Model name sent to the embeddings API."),
    Setting("embed_api_key", "TIDELINE_EMBED_API_KEY", "", "API key for the embeddings API."),
    Setting("embed_batch", "TIDELINE_EMBED_BATCH", 32, "Texts per embedding request or batch."),
    Setting(
        "embed_timeout", "TIDELINE_EMBED_TIMEOUT", 30.0, "Seconds before an embedding call fails."
    ),
    Setting("embed_retries", "TIDELINE_EMBED_RETRIES", 2, "Retries of a failed embedding request."),
    Setting(
        "cache_path",
        "TIDELINE_EMBED_CACHE",
        "",
        "Embedding cache file (default <home>/../embed-cache.db).",
    ),
    Setting(
        "busy_timeout_ms", "TIDELINE_BUSY_TIMEOUT_MS", 5000, "How long a write waits for a lock."
    ),
    Setting("memo_root", "MEMO_ROOT", "", "Root folder of the markdown library."),
    Setting(
        "plugins", "TIDELINE_PLUGINS", "", "Comma-separated allow-list of plugin entry points."
    ),
)

_BY_NAME = {s.name: s for s in SETTINGS}


@dataclass(frozen=True)
class Settings:
    """Resolved settings. Build with `Settings.load()`; tests pass `env=` and `overrides=`."""

    agent_name: str = "agent"
    home: Path = field(default_factory=lambda: Path("~/.tideline/agent").expanduser())
    embedder: str = "e5"
    embed_url: str = ""
    embed_model: str = ""
    embed_api_key: str = ""
    embed_batch: int = 32
    embed_timeout: float = 30.0
    embed_retries: int = 2
    cache_path: Path = field(
        default_factory=lambda: Path("~/.tideline/embed-cache.db").expanduser()
    )
    busy_timeout_ms: int = 5000
    memo_root: Path | None = None
    plugins: str = ""

    @property
    def db_path(self) -> Path:
        """The agent's memory database."""
        return self.home / "memory.db"

    @property
    def soul_path(self) -> Path:
        """The agent's identity file, read into T0."""
        return self.home / "SOUL.md"

    @classmethod
    def load(
        cls,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> Settings:
        """Resolve every setting from overrides, env, the config file and defaults."""
        env = os.environ if env is None else env
        overrides = dict(overrides or {})
        unknown = set(overrides) - set(_BY_NAME)
        if unknown:
            raise ConfigError(f"unknown setting(s) {sorted(unknown)}; known: {sorted(_BY_NAME)}")
        raw: dict[str, Any] = {}
        for s in SETTINGS:
            if s.env in env and env[s.env] != "":
                raw[s.name] = env[s.env]
        raw.update({k: v for k, v in overrides.items() if v is not None})
        agent = str(raw.get("agent_name") or "agent")
        home = _home(raw.get("home"), agent)
        file_values = _read_config_file(
            Path(env["TIDELINE_CONFIG"]) if env.get("TIDELINE_CONFIG") else home / "config.toml"
        )
        merged = {**file_values, **raw}
        values: dict[str, Any] = {}
        for f in fields(cls):
            s = _BY_NAME[f.name]
            values[f.name] = _coerce(s, merged.get(f.name, s.default))
        values["agent_name"] = agent
        values["home"] = _home(merged.get("home"), agent)
        values["cache_path"] = (
            Path(str(merged["cache_path"])).expanduser()
            if merged.get("cache_path")
            else values["home"].parent / "embed-cache.db"
        )
        values["memo_root"] = (
            Path(str(merged["memo_root"])).expanduser() if merged.get("memo_root") else None
        )
        return cls(**values)


def _home(value: Any, agent: str) -> Path:
    if value:
        return Path(str(value)).expanduser()
    return Path("~/.tideline").expanduser() / agent


def _read_config_file(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"config file {path} is not valid TOML ({exc}); fix or remove it"
        ) from exc
    unknown = set(data) - set(_BY_NAME)
    if unknown:
        raise ConfigError(
            f"config file {path} has unknown key(s) {sorted(unknown)}; known: {sorted(_BY_NAME)}"
        )
    return data


def _coerce(setting: Setting, value: Any) -> Any:
    kind = type(setting.default)
    if kind is str or value is None:
        return value if value is None else str(value)
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ConfigError(
            f"setting {setting.name} ({setting.env}) must be {kind.__name__}, got {value!r}"
        ) from None
