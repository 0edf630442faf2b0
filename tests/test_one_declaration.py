"""Each setting is declared once (`tideline.config.SETTINGS`): the `Settings` type, the core's own
defaults (the search policies, `Library`, Sleep's and the dream's limits) and the values each
setting takes all agree with it, no second literal of a default is written where they are
declared, and a section built by name (injection, session memory) reads each of its settings."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tideline.app import (
    Tideline,
    dream_limits,
    inject_config,
    library_options,
    session_limits,
    sleep_limits,
)
from tideline.config import DEFAULTS, SETTINGS, Settings
from tideline.consolidate import Sleep
from tideline.consolidate.dream import Dream
from tideline.errors import ConfigError
from tideline.inject._config import FUSIONS
from tideline.library import LIBRARY, Library
from tideline.library._index import KEY_MODES
from tideline.library._library import CATCH_UP
from tideline.llm._endpoint import LADDER
from tideline.memory import NARRATIVES, TURNS
from tideline.search import ANALYSERS

SRC = Path(__file__).resolve().parents[1] / "src" / "tideline"
PATHS = {"home": Path, "cache_path": Path, "memo_root": Path | None}  # made from a text setting


def test_the_settings_type_has_each_setting_once_with_its_type_and_default(tmp_path: Path) -> None:
    hints = typing.get_type_hints(Settings)
    assert [f.name for f in dataclasses.fields(Settings)] == list(hints)
    assert sorted(hints) == sorted(s.name for s in SETTINGS)
    for s in SETTINGS:
        assert hints[s.name] == PATHS.get(s.name, type(s.default)), s.name
    nowhere = {"TIDELINE_CONFIG": str(tmp_path / "absent.toml")}
    assert Settings() == DEFAULTS == Settings.load(env=nowhere)


@pytest.mark.parametrize(
    ("prefix", "build"), [("inject_", inject_config), ("session_", session_limits)]
)
def test_each_setting_of_a_section_reaches_it(
    prefix: str, build: Callable[[Settings], Any]
) -> None:
    """A section is mapped by name (`app.section`: field `<name>` is the setting
    `<prefix><name>`; injection's budgets `inject_budget_<tier>`): every setting of the prefix
    changes the section built, so none is left unread."""
    base = dataclasses.asdict(build(DEFAULTS))
    other = {"inject_t4_fusion": "weighted", "inject_graph_edges": "causes"}
    for s in SETTINGS:
        if s.name.startswith(prefix):
            value = other.get(s.name, not s.default if isinstance(s.default, bool) else s.default)
            if isinstance(value, int | float) and not isinstance(value, bool):
                value = type(value)(value / 2 if isinstance(value, float) else value + 1)
            changed = build(dataclasses.replace(DEFAULTS, **{s.name: value}))
            assert dataclasses.asdict(changed) != base, s.name


def test_the_core_defaults_are_the_settings_defaults(tmp_path: Path) -> None:
    assert library_options(DEFAULTS)["policy"] == LIBRARY
    options = {k: v for k, v in library_options(DEFAULTS).items() if k != "policy"}
    params = inspect.signature(Library).parameters
    assert {k: params[k].default for k in options} == options
    app = Tideline(Settings.load(overrides={"home": str(tmp_path), "embedder": "none"}))
    try:
        assert app.memory.turn_policy == TURNS
        assert app.memory.narrative_policy == NARRATIVES
    finally:
        app.close()


def test_each_settings_values_are_the_ones_its_user_takes() -> None:
    choices = {s.name: set(s.choices) for s in SETTINGS if s.choices}
    assert choices["search_analyser"] == set(ANALYSERS)
    assert choices["library_keys"] == set(KEY_MODES)
    assert choices["library_catch_up"] == set(CATCH_UP)
    assert choices["inject_t4_fusion"] == set(FUSIONS)
    assert choices["llm_structured"] == {"auto", *LADDER}
    for s in SETTINGS:
        assert s.check(s.default) == s.default, s.name  # every default is a value it takes


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TIDELINE_SEARCH_CENTRE": "sometimes"}, "TIDELINE_SEARCH_CENTRE must be library, all"),
        ({"TIDELINE_TURN_FUSION": "sum"}, "TIDELINE_TURN_FUSION must be rrf or convex"),
        ({"TIDELINE_VECTOR_EF_SEARCH": "5000"}, "TIDELINE_VECTOR_EF_SEARCH must be from 0 to 1000"),
        ({"TIDELINE_INJECT_T2_MIN_WEIGHT": "2"}, "inject_t2_min_weight=2.0 is out of range"),
    ],
)
def test_a_value_a_setting_does_not_take_fails_the_load_in_one_line(
    env: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        Settings.load(env=env)
    assert "\n" not in str(err.value)


def literal_defaults(tree: ast.Module, names: set[str]) -> list[str]:
    """Where a default is written as a literal: a field of the classes `names`, or a keyword of
    a call assigned to one of `names` (None, and keywords no setting has, excepted)."""
    settable = {"rrf_k", "alpha", "boost", "date_weight", "memory_weight", "weights", "centre"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in names:
            for item in node.body:
                value = item.value if isinstance(item, ast.AnnAssign) else None
                if isinstance(value, ast.Constant) and value.value is not None:
                    found.append(f"{node.name}.{ast.unparse(item.target)}")
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            target = ast.unparse(node.targets[0])
            for kw in node.value.keywords if target in names else []:
                if kw.arg in settable and isinstance(kw.value, ast.Constant | ast.Tuple):
                    found.append(f"{target}.{kw.arg}")
    return found


def test_no_second_literal_of_a_default() -> None:
    declared = {
        "inject/_config.py": {"InjectConfig"},
        "library/_library.py": {"LIBRARY"},
        "memory/_memory.py": {"TURNS", "NARRATIVES"},
    }
    for rel, names in declared.items():
        tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
        assert literal_defaults(tree, names) == [], rel
    planted = ast.parse("class InjectConfig:\n    t1_k: int = 5\nTURNS = Policy(rrf_k=10)\n")
    assert literal_defaults(planted, {"InjectConfig", "TURNS"}) == [
        "InjectConfig.t1_k",
        "TURNS.rrf_k",
    ]


#: The fields of Sleep's and the dream's sections and the setting each reads.
SECTIONS = {
    sleep_limits: {
        "run_budget": "llm_run_budget",
        "run_max_calls": "llm_run_max_calls",
        "max_input_tokens": "llm_max_input_tokens",
    },
    dream_limits: {
        "run_budget": "dream_run_budget",
        "run_max_calls": "llm_run_max_calls",
        "max_input_tokens": "llm_max_input_tokens",
        "comb_memories": "dream_comb_memories",
        "drift_hops": "dream_drift_hops",
    },
}


@pytest.mark.parametrize("build", list(SECTIONS), ids=lambda b: b.__name__)
def test_sleep_and_the_dream_take_their_section_of_the_settings(
    build: Callable[[Settings], Any],
) -> None:
    """Sleep and the dream take what settings decide as one section, built in app.py only: each
    field reads its setting, the constructor has no default for it, and no module of theirs
    reads `DEFAULTS`."""
    base = build(DEFAULTS)
    for name, setting in SECTIONS[build].items():
        assert getattr(base, name) == getattr(DEFAULTS, setting), name
        other = dataclasses.replace(DEFAULTS, **{setting: getattr(DEFAULTS, setting) + 1})
        assert getattr(build(other), name) == getattr(DEFAULTS, setting) + 1, name
    assert set(SECTIONS[build]) == {f.name for f in dataclasses.fields(base)}
    for cls in (Sleep, Dream):
        assert inspect.signature(cls).parameters["limits"].default is inspect.Parameter.empty
    read = [p for p in (SRC / "consolidate").rglob("*.py") if "DEFAULTS" in p.read_text()]
    assert read == []
