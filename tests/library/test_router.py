"""Routing: a flat list for a few collections, the name tree plus description search for
thousands, and a description router (BM25 + vectors) beyond."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.library.notes import make_collection
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.embed import Embedder
from tideline.library import RegistryEntry, Router, load_registry, save_registry

WORDS = [
    "alpine",
    "badger",
    "cactus",
    "delta",
    "ember",
    "falcon",
    "glacier",
    "harbor",
    "iris",
    "jasper",
    "kelp",
    "lantern",
    "meadow",
    "nebula",
    "orchard",
    "pepper",
    "quartz",
    "raven",
    "saffron",
    "tundra",
    "umber",
    "violet",
    "walnut",
    "xenon",
    "yarrow",
    "zephyr",
    "anchor",
    "beacon",
    "cobalt",
    "dune",
    "estuary",
    "fjord",
    "granite",
    "heron",
    "indigo",
    "juniper",
    "kestrel",
    "lagoon",
    "mantis",
    "nectar",
    "onyx",
    "pylon",
    "quill",
    "reef",
    "sierra",
    "thistle",
    "urchin",
    "vapor",
    "willow",
    "yucca",
    "zinnia",
    "amber",
    "birch",
    "canyon",
    "dynamo",
    "eclipse",
    "fern",
    "geyser",
    "hollow",
    "ivy",
    "jungle",
    "koala",
    "lotus",
    "marble",
    "nomad",
    "oasis",
    "prism",
    "quiver",
    "ripple",
    "summit",
    "tidal",
    "uplift",
    "vortex",
    "wander",
    "yonder",
    "zenith",
    "acorn",
    "bramble",
    "cinder",
    "drift",
    "ermine",
    "flint",
    "gravel",
    "hazel",
    "ingot",
    "jetty",
    "kiln",
    "lichen",
    "moss",
    "nettle",
    "opal",
    "pebble",
    "quarry",
    "rust",
    "shale",
    "talon",
    "umbra",
    "verge",
    "wharf",
    "yeast",
    "zircon",
]


def _synthetic(n_areas: int = 50, per_area: int = 100) -> dict[str, RegistryEntry]:
    rng = random.Random(42)
    entries = {}
    for a in range(n_areas):
        for t in range(per_area):
            name = f"area{a:02d}/topic{t:03d}"
            words = rng.sample(WORDS, 6)
            entries[name] = RegistryEntry(name, name, "Notes on " + " ".join(words))
    return entries


def test_five_thousand_collections_route_to_the_right_one(lib_root: Path) -> None:
    entries = _synthetic()
    assert len(entries) == 5000
    save_registry(lib_root, entries)
    assert len(load_registry(lib_root)) == 5000
    rng = random.Random(1)
    targets = rng.sample(sorted(entries), 25)
    with library_from(DEFAULTS, lib_root) as lib:
        found = 0
        for name in targets:
            words = entries[name].description.split()[2:]
            query = "where are my notes about " + " ".join(rng.sample(words, 3))
            result = lib.route(query, k=10)
            assert result.strategy == "tree" and result.total == 5000
            found += name in [c.name for c in result.candidates]
        assert found >= 24  # among the top 10 of 5,000

        # a name prefix narrows the tree and shows its branches
        target = targets[0]
        area = target.split("/")[0]
        words = " ".join(entries[target].description.split()[2:5])
        result = lib.route(f"{area}/ {words}", k=5)
        assert result.prefix == area
        assert all(c.name.startswith(area + "/") for c in result.candidates)
        assert result.candidates[0].name == target
        assert len(result.tree) == 50 and all(n.startswith(area + "/") for n in result.tree)


def test_a_few_collections_are_listed_whole(lib_root: Path) -> None:
    make_collection(lib_root, "infra", "Servers and networks", {"a.md": "# a\n"})
    make_collection(lib_root, "life/books", "Books I read", {"b.md": "# b\n"})
    with library_from(DEFAULTS, lib_root) as lib:
        result = lib.route("novels")
        assert result.strategy == "flat"
        assert [c.line() for c in result.candidates] == [
            "infra — Servers and networks",
            "life/books — Books I read",
        ]
        lib.init_collection("life/films", "Films I watched")  # the kept router sees it
        assert "life/films" in [c.name for c in lib.route("novels").candidates]


def test_route_keeps_its_router_until_the_registry_changes(lib_root: Path) -> None:
    entries = _synthetic()
    save_registry(lib_root, entries)
    with library_from(DEFAULTS, lib_root) as lib:
        lib.route("glacier harbor iris")
        assert lib._router is not None
        parsed = lib._router.entries
        lib.route("falcon ember quartz")
        assert lib._router.entries is parsed  # no re-parse of 5,000 entries
        # another process rewrites `_registry.yaml`: the next route reads it again
        entries["zeta/marzipan"] = RegistryEntry("zeta/marzipan", "zeta/marzipan", "Marzipan")
        save_registry(lib_root, entries)
        result = lib.route("marzipan", k=3)
        assert result.total == 5001 and result.candidates[0].name == "zeta/marzipan"


def test_description_router_uses_vectors_beyond_the_tree(lib_root: Path, e5: Embedder) -> None:
    descriptions = {
        "kitchen": "Recipes: bread, soups and baking",
        "garden": "Vegetable garden, watering and seeds",
        "infra": "Servers, backups and network configuration",
        "taxes": "Tax returns, invoices and accounting",
        "travel": "Trips, flights and hotel bookings",
        "health": "Doctor visits, medicines and sport",
        "music": "Guitar chords and songs to learn",
        "car": "Car repairs, tyres and insurance",
    }
    entries = {n: RegistryEntry(n, n, d) for n, d in descriptions.items()}
    router = Router(lib_root, e5, flat_max=2, tree_max=4, entries=entries)
    try:
        result = router.route("как испечь хлеб", k=3)  # Russian: "how to bake bread"
        assert result.strategy == "router"
        assert result.candidates[0].name == "kitchen"
        result = router.route("flight to Lisbon", k=3)
        assert result.candidates[0].name == "travel"
        # changed descriptions are re-indexed by hash, removed ones disappear
        router.entries = {**entries, "kitchen": RegistryEntry("kitchen", "kitchen", "Old stamps")}
        del router.entries["travel"]
        names = [c.name for c in router.route("flight to Lisbon", k=8).candidates]
        assert "travel" not in names
    finally:
        router.close()


@pytest.mark.parametrize("query", ["", "   ", "((("])
def test_odd_queries_do_not_break_routing(lib_root: Path, query: str) -> None:
    save_registry(lib_root, _synthetic(2, 40))
    with library_from(DEFAULTS, lib_root) as lib:
        result = lib.route(query)
    assert result.strategy == "tree" and result.candidates == []
