"""`tideline.llm.__all__` lists exactly its public names (the check of tests/test_exports.py)."""

from __future__ import annotations

from tests.test_exports import test_all_matches_public_names as check_exports


def test_llm_all_matches_public_names() -> None:
    check_exports("tideline.llm")
