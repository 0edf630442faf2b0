"""Strict mypy (`make lint`) covers every package and root module of `tideline`: each is listed
in pyproject's [tool.mypy] files or lies under a listed folder (today `src/tideline` itself), and
`NOT_YET` — the units still outside — only shrinks. A planted untyped function fails the
configured check."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from mypy import api

ROOT = Path(__file__).parents[1]
NOT_YET: set[str] = set()


def checked() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(config["tool"]["mypy"]["files"])


def units() -> set[str]:
    src = ROOT / "src" / "tideline"
    found = {p for p in src.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    return {p.relative_to(ROOT).as_posix() for p in found}


def unchecked(found: set[str], listed: set[str]) -> set[str]:
    """The units of `found` that no entry of `listed` names, itself or as a folder above it."""
    return {u for u in found if not any(u == c or u.startswith(c + "/") for c in listed)}


def test_every_unit_is_checked_strictly() -> None:
    left = unchecked(units(), checked())
    assert left <= NOT_YET, f"add to [tool.mypy] files: {sorted(left - NOT_YET)}"
    assert left >= NOT_YET, f"checked now, delete from NOT_YET: {sorted(NOT_YET - left)}"


LOOSENINGS = {"ignore_missing_imports", "disable_error_code"}  # what an override may say


def loosened(config: dict[str, Any]) -> list[str]:
    """Overrides that turn strictness off for our own code: any setting but a third-party
    library's missing stubs, or a named error code (each with its reason in pyproject)."""
    out = []
    for o in config["tool"]["mypy"].get("overrides", []):
        modules = [o["module"]] if isinstance(o["module"], str) else o["module"]
        ours = [m for m in modules if m.split(".")[0] == "tideline"]
        extra = set(o) - {"module"} - LOOSENINGS
        if extra or (ours and o.get("ignore_missing_imports")):
            out.append(f"{modules}: {sorted(extra) or 'ignore_missing_imports'}")
    return out


def test_no_override_turns_strictness_off_for_our_code() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["mypy"]["strict"] is True
    assert loosened(config) == []


def test_a_planted_loosening_is_found() -> None:
    planted = {"module": ["tideline.profile._facts"], "ignore_errors": True}
    stubless = {"module": ["tideline.store"], "ignore_missing_imports": True}
    fine = {"module": "jieba.*", "ignore_missing_imports": True}
    config = {"tool": {"mypy": {"overrides": [planted, stubless, fine]}}}
    assert loosened(config) == [
        "['tideline.profile._facts']: ['ignore_errors']",
        "['tideline.store']: ignore_missing_imports",
    ]


def test_a_unit_outside_the_listed_folders_is_found() -> None:
    found = {"src/tideline/store", "src/tideline/app.py", "src/tideline/upkeep"}
    assert unchecked(found, {"src/tideline"}) == set()
    assert unchecked(found, {"src/tideline/store", "src/tideline/app.py"}) == {
        "src/tideline/upkeep"
    }
    assert unchecked({"src/tideline/storage"}, {"src/tideline/store"}) == {"src/tideline/storage"}


def test_the_configured_check_refuses_an_untyped_function(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("def twice(x):\n    return x * 2\n", encoding="utf-8")
    out, _, status = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--no-incremental", str(planted)]
    )
    assert status == 1 and "missing a type annotation" in out, out
