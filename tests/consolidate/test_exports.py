"""`tideline.consolidate.__all__` lists exactly its public names; its prompts ship and parse."""

from __future__ import annotations

import tideline.consolidate as consolidate
from tideline.consolidate import LLM_STEPS, prompt, prompt_versions


def test_all_matches_public_names() -> None:
    """Eager and lazy exports alike (`tideline.lazy`: `dir()` lists both); each one resolves."""
    public = {n for n in dir(consolidate) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(consolidate, n)).__name__ == "module"}
    assert set(consolidate.__all__) == public - submodules


def test_every_llm_step_has_a_versioned_prompt() -> None:
    assert set(prompt_versions()) == set(LLM_STEPS) and len(LLM_STEPS) == 8
    for step in (*LLM_STEPS, "session_summary"):
        p = prompt(step)
        assert p.step == step and p.version >= 1 and len(p.text) > 200
