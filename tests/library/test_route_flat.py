"""Flat routing ranks every collection by its description and its notes, so a question that
shares no word with any description is still routed (instead of every collection at 0.0)."""

from __future__ import annotations

from pathlib import Path

from tests.library.notes import make_collection
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.embed import Embedder


def _library(root: Path) -> None:
    make_collection(root, "infra", "Servers and networks", {"a.md": "# VPN\n\nvpn-7 runbook\n"})
    make_collection(
        root,
        "life/books",
        "Books I read",
        {"b.md": "# Reading\n\nThe Name of the Wind, a fantasy novel by Patrick Rothfuss.\n"},
    )
    make_collection(root, "life/food", "Recipes", {"c.md": "# Bread\n\nSourdough starter.\n"})


def test_content_ranks_collections_whose_descriptions_miss_the_words(lib_root: Path) -> None:
    _library(lib_root)
    with library_from(DEFAULTS, lib_root) as lib:  # no embedder: words only
        lib.index()
        result = lib.route("Rothfuss")
    assert result.strategy == "flat"
    assert result.candidates[0].name == "life/books"
    assert result.candidates[0].score > 0 and len(result.candidates) == 3  # still all listed


def test_meaning_ranks_every_collection(lib_root: Path, e5: Embedder) -> None:
    _library(lib_root)
    with library_from(DEFAULTS, lib_root, e5) as lib:
        lib.index()
        result = lib.route("which fantasy author did I like")
        assert result.candidates[0].name == "life/books"
        assert all(c.score > 0 for c in result.candidates)
