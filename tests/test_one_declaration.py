"""Each setting is declared once (`tideline.config.SETTINGS`): the `Settings` type and the values
each setting takes agree with it; what a service's settings decide (the search policies,
`Library`'s options, Sleep's and the dream's limits) is built from `Settings` in app.py only, never
defaulted from `DEFAULTS` in the service, with no second literal of a default; and a section built
by name (injection, session memory) reads each of its settings."""

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
    library_policy,
    memory_policies,
    narrative_policy,
    session_limits,
    sleep_limits,
    turn_policy,
)
from tideline.config import DEFAULTS, SETTINGS, Settings
from tideline.consolidate import Sleep
from tideline.consolidate.dream import Dream
from tideline.errors import ConfigError
from tideline.inject._config import FUSIONS
from tideline.library import Library
from tideline.library._collection_index import KEY_MODES
from tideline.library._library import CATCH_UP
from tideline.llm._endpoint import LADDER
from tideline.memory import Memory
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


#: The settings each search policy reads (app.py builds it; the rest of its fields are fixed).
POLICIES: dict[Callable[[Settings], Any], set[str]] = {
    turn_policy: {
        "turn_fusion",
        "turn_rrf_k",
        "turn_vector_weight",
        "turn_alpha",
        "turn_date_weight",
        "turn_memory_weight",
        "turn_speaker_weight",
        "turn_answer_weight",
        "turn_own_weight",
        "turn_neighbour_weight",
        "turn_reply_weight",
        "turn_number_weight",
        "turn_session_weight",
        "turn_session_cap",
        "search_stop_words",
        "search_centre",
        "search_truncate",
        "search_time_window",
    },
    narrative_policy: {"keyword_boost", "search_stop_words", "search_centre", "search_time_window"},
    library_policy: {
        "library_rrf_k",
        "library_vector_weight",
        "library_lex_floor",
        "search_centre",
    },
}


def other_values(setting: str) -> list[Any]:
    """Values of `setting` other than its default (each other choice, where it has choices)."""
    found = next(s for s in SETTINGS if s.name == setting)
    default = found.default
    if found.choices:
        return [c for c in found.choices if c != default]
    if isinstance(default, bool):
        return [not default]
    if isinstance(default, int):
        return [default + 1]
    if isinstance(default, float):
        return [default + 0.25]
    return ["restrict"]  # the one text setting a policy reads is `search_time_window`


@pytest.mark.parametrize("build", list(POLICIES), ids=lambda b: b.__name__)
def test_each_search_policy_reads_its_settings_and_no_other(
    build: Callable[[Settings], Any],
) -> None:
    base = build(DEFAULTS)
    for s in SETTINGS:
        changed = [
            build(dataclasses.replace(DEFAULTS, **{s.name: v})) for v in other_values(s.name)
        ]
        assert any(c != base for c in changed) == (s.name in POLICIES[build]), s.name


def test_memory_and_the_library_take_what_settings_decide_from_app(tmp_path: Path) -> None:
    """`Memory`'s policies and `Library`'s options have no default in their constructors (no
    module of memory or library reads `DEFAULTS`): the app passes the settings' own."""
    options = library_options(DEFAULTS)
    params = inspect.signature(Library).parameters
    assert all(params[k].default is inspect.Parameter.empty for k in options)
    params = inspect.signature(Memory).parameters
    assert all(params[k].default is inspect.Parameter.empty for k in memory_policies(DEFAULTS))
    read = [
        p
        for package in ("memory", "library")
        for p in (SRC / package).rglob("*.py")
        if "DEFAULTS" in p.read_text()
    ]
    assert read == []
    settings = Settings.load(
        overrides={"home": str(tmp_path), "embedder": "none", "turn_rrf_k": 7, "keyword_boost": 0.5}
    )
    app = Tideline(settings)
    try:
        assert app.memory.turn_policy == turn_policy(settings) != turn_policy(DEFAULTS)
        assert app.memory.narrative_policy == narrative_policy(settings)
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


def literal(node: ast.expr) -> bool:
    """A constant, or a tuple of constants."""
    if isinstance(node, ast.Tuple):
        return all(literal(e) for e in node.elts)
    return isinstance(node, ast.Constant)


def literal_defaults(tree: ast.Module, names: set[str]) -> list[str]:
    """Where a default is written as a literal: a field of the classes `names`, a keyword of a
    call assigned to one of `names`, or of the call the function `names` returns (None, and
    keywords no setting has, excepted)."""
    settable = {"rrf_k", "alpha", "boost", "date_weight", "memory_weight", "weights", "centre"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Call):
                    found += [
                        f"{node.name}.{kw.arg}"
                        for kw in ret.value.keywords
                        if kw.arg in settable and literal(kw.value)
                    ]
        if isinstance(node, ast.ClassDef) and node.name in names:
            for item in node.body:
                value = item.value if isinstance(item, ast.AnnAssign) else None
                if isinstance(value, ast.Constant) and value.value is not None:
                    found.append(f"{node.name}.{ast.unparse(item.target)}")
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            target = ast.unparse(node.targets[0])
            for kw in node.value.keywords if target in names else []:
                if kw.arg in settable and literal(kw.value):
                    found.append(f"{target}.{kw.arg}")
    return found


def test_no_second_literal_of_a_default() -> None:
    declared = {
        "inject/_config.py": {"InjectConfig"},
        "app.py": {"turn_policy", "narrative_policy", "library_policy"},
    }
    for rel, names in declared.items():
        tree = ast.parse((SRC / rel).read_text(encoding="utf-8"))
        assert literal_defaults(tree, names) == [], rel
    planted = ast.parse(
        "class InjectConfig:\n    t1_k: int = 5\nTURNS = Policy(rrf_k=10)\n"
        "def turn_policy(s):\n    return Policy(rrf_k=s.turn_rrf_k, weights=(1.0, 0.5))\n"
    )
    assert literal_defaults(planted, {"InjectConfig", "TURNS", "turn_policy"}) == [
        "InjectConfig.t1_k",
        "TURNS.rrf_k",
        "turn_policy.weights",
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
