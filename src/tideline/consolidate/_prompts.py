"""The prompts of the LLM steps: one markdown file per step in `prompts/`, versioned, and how
facts, turns, people and the trajectory read in them.

Each file starts with front matter naming its `step` and `version`; the body is the system
message. A run records the version of every prompt it used (`sleep_runs.prompt_versions`), and
every row a run writes carries its run id, so each fact can be traced to the prompt behind it.
Change a prompt's wording → bump its version.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from tideline.consolidate._working import Working
from tideline.errors import ConfigError
from tideline.memory import Turn
from tideline.profile import Fact, trajectory_lines


@dataclass(frozen=True)
class Prompt:
    step: str
    version: int
    text: str
    #: Other front-matter keys (the dream prompts name their `inputs` and a `description`).
    meta: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def label(self) -> str:
        """How run records name it: `extract@1`."""
        return f"{self.step}@{self.version}"


def _parse(name: str, raw: str) -> Prompt:
    head, sep, body = raw.removeprefix("---\n").partition("\n---\n")
    if not raw.startswith("---\n") or not sep:
        raise ConfigError(f"prompt {name}: front matter (---, step, version, ---) is missing")
    meta = dict(line.split(":", 1) for line in head.splitlines() if ":" in line)
    try:
        extra = {
            k.strip(): v.strip() for k, v in meta.items() if k.strip() not in ("step", "version")
        }
        return Prompt(meta["step"].strip(), int(meta["version"]), body.strip(), extra)
    except (KeyError, ValueError):
        raise ConfigError(
            f"prompt {name}: front matter needs `step:` and an integer `version:`"
        ) from None


def packaged() -> list[str]:
    """The step names of every packaged prompt, sorted."""
    folder = resources.files("tideline.consolidate") / "prompts"
    return sorted(p.name.removesuffix(".md") for p in folder.iterdir() if p.name.endswith(".md"))


@cache
def prompt(step: str) -> Prompt:
    """The packaged prompt of one LLM step."""
    path = resources.files("tideline.consolidate") / "prompts" / f"{step}.md"
    if not path.is_file():
        raise ConfigError(f"no prompt for step {step!r}; the package is incomplete, reinstall it")
    found = _parse(path.name, path.read_text(encoding="utf-8"))
    if found.step != step:
        raise ConfigError(f"prompt {path.name} says step {found.step!r}; it must say {step!r}")
    return found


def fact_line(f: Fact) -> str:
    """`[3] city: lives in Osaka — suspected, 2× mentioned, said 2023-05-08 … 2023-06-09`: the
    days are valid time, when it was first and last said."""
    who = "" if f.subject == "user" else f" (about {f.subject})"
    extra = f", {f.source_type}" if f.source_type != "stated" else ""
    first, last = f.valid_from[:10], f.last_seen_at[:10]
    said = f"said {first}" + (f" … {last}" if last != first else "")
    return (
        f"[{f.id}] {f.category}: {f.value}{who} — {f.status}, {f.mention_count}× mentioned"
        f"{extra}, {said}"
    )


def turn_line(t: Turn) -> str:
    who = t.speaker or t.role
    role = f" ({t.role})" if t.speaker and t.role != "user" else ""
    return f"[{t.id}] {t.ts[:16]} {who}{role}: {t.text}"


def trajectory_text(work: Working) -> list[str]:
    """The working trajectory for a prompt: anchors as `[id] category: value`."""
    return trajectory_lines(work.trajectory, work.facts, ids=True)
