"""Where a Hermes agent's memory lives: one Tideline home per Hermes profile, and inside it one
namespace per platform user, so one user's memory never reaches another's.

Hermes hands `initialize` its home (`hermes_home`, itself one per profile), the profile's name
(`agent_identity`) and, from a gateway, the platform user (`user_id`). The home is
`$HERMES_HOME/tideline/<agent>` (the agent named after the profile, `hermes` for the default
one); a user's is `users/<user>` inside it, with a library of their own. What the user set in
`config.yaml` under `memory.tideline` (Tideline setting names: `home`, `llm_base_url`, …; what
`hermes memory setup` writes) overrides these defaults; the home's `config.toml` applies as
everywhere. SOUL.md is Hermes's own, which Hermes puts in the system prompt itself, so T0 leaves
it out (`inject_t0_soul` off) and a session's end starts a sleep (`sleep_on_exit` on).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from tideline.config import Settings
from tideline.errors import ConfigError

#: The key of config.yaml's `memory` mapping that holds Tideline's settings.
CONFIG_KEY = "tideline"
DEFAULT_AGENT = "hermes"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def default_hermes_home() -> Path:
    """Hermes's home when nobody said: `$HERMES_HOME` (as Hermes reads it), else ~/.hermes."""
    configured = Settings.load().hermes_home
    return Path(configured).expanduser() if configured else Path.home() / ".hermes"


def agent_name(identity: str) -> str:
    """The agent a Hermes profile is: its name, `hermes` for the default profile."""
    name = safe_name(identity) if identity and identity != "default" else ""
    return name or DEFAULT_AGENT


def safe_name(value: str) -> str:
    """`value` as one folder name: kept when it already is one, else its safe characters and a
    short hash of the whole (so `a/b` and `a_b` stay two users)."""
    clean = _SAFE.sub("_", value).strip("._")[:64]
    if clean == value:
        return clean
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:10]
    return f"{clean or 'user'}-{digest}"


def plugin_config(hermes_home: Path) -> dict[str, Any]:
    """`memory.tideline` of `$HERMES_HOME/config.yaml` (empty when absent)."""
    path = hermes_home / "config.yaml"
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"cannot read {path} ({exc}); fix its YAML or remove memory.{CONFIG_KEY}"
        ) from None
    memory = data.get("memory") if isinstance(data, dict) else None
    found = memory.get(CONFIG_KEY) if isinstance(memory, dict) else None
    if found is not None and not isinstance(found, dict):
        raise ConfigError(
            f"memory.{CONFIG_KEY} in {path} must be a mapping of Tideline settings "
            "(e.g. llm_base_url: http://127.0.0.1:8080/v1)"
        )
    return dict(found or {})


def hermes_overrides(hermes_home: Path, identity: str = "") -> dict[str, Any]:
    """The settings a Hermes profile's memory is loaded with: the defaults above, then what the
    user set in config.yaml."""
    agent = agent_name(identity)
    return {
        "agent_name": agent,
        "home": str(hermes_home / "tideline" / agent),
        "soul_file": str(hermes_home / "SOUL.md"),
        "inject_t0_soul": False,
        "sleep_on_exit": True,
        **plugin_config(hermes_home),
    }


def hermes_settings(
    hermes_home: Path, identity: str = "", user: str = ""
) -> tuple[Settings, dict[str, Any]]:
    """The settings of this profile's (and user's) memory, and the overrides that make them (a
    child process, the sleep, is given them as environment variables)."""
    overrides = hermes_overrides(hermes_home, identity)
    settings = Settings.load(overrides=overrides)
    if user:
        name = safe_name(user)
        library = settings.memo_root / "users" / name if settings.memo_root else None
        settings = replace(
            settings.for_namespace(settings.agent_name, name, library),
            soul_file=settings.soul_file,
        )
        overrides |= {
            "home": str(settings.home),
            "database_user": settings.database_user,
            "memo_root": str(library or ""),
        }
    return settings, overrides


def with_values(values: Mapping[str, Any], hermes_home: Path) -> None:
    """Write `values` (Tideline settings) to `memory.tideline` of config.yaml, keeping the rest:
    where `hermes memory setup` saves what it asked."""
    path = hermes_home / "config.yaml"
    data: dict[str, Any] = {}
    if path.is_file():
        loaded = yaml.safe_load(path.read_text(encoding="utf-8-sig")) or {}
        data = loaded if isinstance(loaded, dict) else {}
    memory = data.setdefault("memory", {})
    if not isinstance(memory, dict):
        raise ConfigError(f"memory in {path} is not a mapping; fix config.yaml first")
    memory[CONFIG_KEY] = {**(memory.get(CONFIG_KEY) or {}), **values}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
