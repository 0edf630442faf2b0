"""An embedding endpoint that goes down: search and routing answer lexically with a warning, and
new text waits for its vectors instead of failing the call. The endpoint is a real OpenAI-protocol
server on 127.0.0.1 (tests/openai_stub.py), stopped after the first indexing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.library.corpus import build
from tests.openai_stub import OpenAIStub
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.embed import OpenAIEmbedder
from tideline.library import RegistryEntry, Router

DOWN = "vector search skipped, results are lexical only"


@pytest.fixture
def dead() -> Iterator[OpenAIEmbedder]:
    """An embedder that worked once (its dimension is known) and whose endpoint is now stopped."""
    with OpenAIStub() as stub:
        embedder = OpenAIEmbedder(stub.url, "m", retries=0, timeout=5)
        assert embedder.dim == 16
    yield embedder


def test_search_falls_back_to_lexical_when_the_endpoint_is_down(lib_root: Path) -> None:
    build(lib_root)
    with OpenAIStub() as stub:
        library = library_from(
            DEFAULTS, lib_root, OpenAIEmbedder(stub.url, "m", retries=0, timeout=5)
        )
        library.index()
        assert library.status("infra")["collections"][0]["vectors_pending"] == 0
    with library:  # the endpoint is stopped from here on
        for mode in ("hybrid", "vec"):
            result = library.search("firewall rule 4711", "infra", k=3, mode=mode)
            assert result.hits[0].heading.endswith("Policy based routing")
            assert result.hits[0].vec_rank is None and result.mode == "lex"  # what ran
            assert [w for w in result.warnings if DOWN in w and "unreachable" in w]
        # an edit made while the endpoint is down is indexed and found; its vector waits
        with (lib_root / "infra/runbook.md").open("a", encoding="utf-8") as fh:
            fh.write("\n## Tape archive\n\nThe LTO tapes go to the bank vault on Fridays.\n")
        result = library.search("LTO tapes vault", "infra", k=1)
        assert result.caught_up == 1 and result.hits[0].heading.endswith("Tape archive")
        assert [w for w in result.warnings if "infra: 1 texts not embedded yet" in w]
        assert library.status("infra")["collections"][0]["vectors_pending"] == 1
    with (
        OpenAIStub() as stub,
        library_from(DEFAULTS, lib_root, OpenAIEmbedder(stub.url, "m", dim=16)) as back,
    ):
        result = back.search("LTO tapes vault", "infra", k=1)  # the endpoint is back
        assert result.warnings == [] and result.hits[0].vec_rank is not None
        assert back.status("infra")["collections"][0]["vectors_pending"] == 0
        sent = sorted(t for r in stub.requests for t in r["body"]["input"])
        assert len(sent) == 2 and "LTO tapes vault" in sent  # the query and the one pending chunk


def test_vec_mode_without_an_embedder_is_lexical_with_a_warning(lib_root: Path) -> None:
    build(lib_root)
    with library_from(DEFAULTS, lib_root, None) as library:
        result = library.search("firewall rule 4711", "infra", k=3, mode="vec")
        assert result.hits[0].heading.endswith("Policy based routing")
        assert result.warnings == [
            "no embedder configured: vector search is off, showing lexical results"
        ]


def test_router_falls_back_to_lexical_when_the_endpoint_is_down(
    lib_root: Path, dead: OpenAIEmbedder
) -> None:
    entries = {
        "kitchen": RegistryEntry("kitchen", "kitchen", "Recipes: bread, soups and baking"),
        "travel": RegistryEntry("travel", "travel", "Trips, flights and hotel bookings"),
        "infra": RegistryEntry("infra", "infra", "Servers, backups and networks"),
    }
    router = Router(lib_root, dead, flat_max=1, tree_max=2, entries=entries)
    try:
        result = router.route("hotel flights", k=2)
        assert result.strategy == "router" and result.candidates[0].name == "travel"
        assert [w for w in result.warnings if DOWN in w]
        assert [w for w in result.warnings if w.startswith("3 texts not embedded yet")]
    finally:
        router.close()
