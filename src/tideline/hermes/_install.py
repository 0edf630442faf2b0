"""`tideline hermes install`: make Hermes Agent load Tideline as its memory provider, and undo it.

Hermes 0.19 finds a user's memory provider in `$HERMES_HOME/plugins/<name>/` (an `__init__.py`
that mentions `register_memory_provider`, and a `plugin.yaml` it describes it by) and activates
the one named by `memory.provider` in `$HERMES_HOME/config.yaml`. The plugin written here holds no
code of Tideline's: its `__init__.py` imports the installed package, so upgrading Tideline
upgrades the plugin. Installing again changes nothing; `uninstall` removes the folder and gives
`memory.provider` back the value it had before (kept in plugin.yaml), or built-in memory.

config.yaml is Hermes's file, with the user's comments: the provider line is changed as text,
the rest left byte for byte, and the result is read back to check it says what was meant. A
config.yaml this cannot safely change is left alone, and the result says which line to set.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tideline.errors import ConfigError, HomeNotWritable
from tideline.hermes._home import plugin_config

NAME = "tideline"
PROVIDER_LINE = f"memory.provider: {NAME}"
INIT = '''"""Tideline, the memory provider of this Hermes (written by `tideline hermes install`; remove it
with `tideline hermes install --uninstall`). Hermes calls `register(ctx)`, which hands it a
`MemoryProvider` through ctx.register_memory_provider; the code is the installed package's."""

try:
    from tideline.hermes import register
except ImportError as exc:  # Tideline is not installed in the Python that runs Hermes
    import logging
    import sys

    logging.getLogger("tideline.hermes").warning(
        "Tideline memory is off: %s; install it with %s -m pip install tideline", exc, sys.executable
    )
'''


@dataclass
class Installed:
    """What an install or uninstall did, for a person or as JSON."""

    hermes_home: str
    plugin: str
    config: str
    changed: list[str] = field(default_factory=list)  # files written or removed
    provider: str | None = None  # memory.provider now (None: config.yaml left alone)
    todo: str = ""  # what the user must still do by hand

    def to_dict(self) -> dict[str, Any]:
        return {
            "hermes_home": self.hermes_home,
            "plugin": self.plugin,
            "config": self.config,
            "changed": self.changed,
            "provider": self.provider,
            "todo": self.todo or None,
        }


def plugin_yaml(replaced: str) -> str:
    text = (
        f"name: {NAME}\n"
        "version: 1\n"
        'description: "Tideline - every turn kept word for word, narrative memories, a profile '
        'with two clocks and a sleep; offline."\n'
        "hooks:\n  - on_session_end\n  - on_pre_compress\n  - on_memory_write\n"
    )
    return text + (f"replaced_provider: {replaced}\n" if replaced else "")


def install(hermes_home: Path, *, set_provider: bool = True) -> Installed:
    """Write the plugin and, with `set_provider`, point `memory.provider` at it."""
    plugin = hermes_home / "plugins" / NAME
    config = hermes_home / "config.yaml"
    done = Installed(str(hermes_home), str(plugin), str(config))
    current = _provider(config)
    before = _replaced(plugin) if current == NAME else current
    _write(plugin / "__init__.py", INIT, done)
    _write(plugin / "plugin.yaml", plugin_yaml(before or ""), done)
    plugin_config(hermes_home)  # a memory.tideline that cannot be used fails the install now
    if not set_provider:
        done.todo = f"set {PROVIDER_LINE} in {config} (or run `hermes memory setup`)"
        return done
    _set_provider(config, NAME, done)
    return done


def uninstall(hermes_home: Path) -> Installed:
    """Remove the plugin and give `memory.provider` back what it was before (or built-in)."""
    plugin = hermes_home / "plugins" / NAME
    config = hermes_home / "config.yaml"
    done = Installed(str(hermes_home), str(plugin), str(config))
    before = _replaced(plugin)
    if plugin.exists():
        try:
            shutil.rmtree(plugin)
        except OSError as exc:
            raise HomeNotWritable(
                f"cannot remove {plugin}: {exc.strerror or exc}; remove the folder by hand"
            ) from None
        done.changed.append(str(plugin))
    if _provider(config) == NAME:
        _set_provider(config, before or "", done)
    else:
        done.provider = _provider(config)
    return done


def _write(path: Path, text: str, done: Installed) -> None:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise HomeNotWritable(
            f"cannot write {path}: {exc.strerror or exc}; pass --hermes-home with a Hermes home "
            "you can write (HERMES_HOME)"
        ) from None
    done.changed.append(str(path))


def _load(config: Path) -> dict[str, Any]:
    if not config.is_file():
        return {}
    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8-sig")) or {}
    except (OSError, yaml.YAMLError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(
            f"cannot read {config} ({first}); fix its YAML, then install again"
        ) from None
    return data if isinstance(data, dict) else {}


def _provider(config: Path) -> str | None:
    memory = _load(config).get("memory")
    value = memory.get("provider") if isinstance(memory, dict) else None
    return str(value) if value else None


def _replaced(plugin: Path) -> str | None:
    try:
        meta = yaml.safe_load((plugin / "plugin.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    value = meta.get("replaced_provider") if isinstance(meta, dict) else None
    return str(value) if value else None


_MEMORY = re.compile(r"^memory:[ \t]*(#.*)?$", re.MULTILINE)
_KEY = re.compile(r"^([ \t]+)provider:[^\n]*$", re.MULTILINE)


def _set_provider(config: Path, name: str, done: Installed) -> None:
    """`memory.provider: <name>` in config.yaml, changed as text (see the module docstring)."""
    if _provider(config) == (name or None):
        done.provider = name
        return
    text = config.read_text(encoding="utf-8-sig") if config.is_file() else ""
    value = name or '""'
    block = _MEMORY.search(text)
    if block is None:
        if re.search(r"^memory\s*:", text, re.MULTILINE):  # a flow mapping or odd spacing
            done.todo = f"set memory.provider: {value} in {config} by hand"
            return
        new = (
            text
            + ("" if text.endswith("\n") or not text else "\n")
            + (f"memory:\n  provider: {value}\n")
        )
    else:
        start = block.end() + 1
        end = re.search(r"^\S", text[start:], re.MULTILINE)
        body = text[start : start + end.start()] if end else text[start:]
        key = _KEY.search(body)
        if key is not None and key.group(1) == _indent(body):
            body = body[: key.start()] + f"{key.group(1)}provider: {value}" + body[key.end() :]
        else:
            body = f"{_indent(body) or '  '}provider: {value}\n" + body
        new = text[:start] + body + (text[start + end.start() :] if end else "")
    if _read(new).get("memory", {}).get("provider", "") != name:
        done.todo = f"set memory.provider: {value} in {config} by hand"
        return
    _write(config, new, done)
    done.provider = name


def _indent(body: str) -> str:
    """The indentation of the first key in a mapping's block."""
    found = re.search(r"^([ \t]+)\S", body, re.MULTILINE)
    return found.group(1) if found else ""


def _read(text: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}
