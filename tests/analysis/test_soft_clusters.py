"""Soft k-means clusters on synthetic vectors with planted structure."""

from __future__ import annotations

import numpy as np
import pytest

from tideline.analysis import (
    build_soft_clusters,
    choose_k,
    nearest_clusters,
    neighbours,
)

DIM = 32


def planted_vectors(
    per_cluster: int = 40, n_clusters: int = 5, seed: int = 3
) -> tuple[list[tuple[str, np.ndarray]], np.ndarray, list[int]]:
    """Well separated planted centres (orthogonal axes) with small noise around each."""
    rng = np.random.default_rng(seed)
    centres = np.eye(DIM, dtype=np.float32)[:n_clusters] * 10
    items, labels = [], []
    for c in range(n_clusters):
        for j in range(per_cluster):
            items.append((f"c{c}-{j}", centres[c] + rng.normal(scale=0.5, size=DIM)))
            labels.append(c)
    return items, centres, labels


def test_choose_k() -> None:
    assert [choose_k(n) for n in (0, 1, 3, 5, 10, 100, 10_000)] == [0, 1, 3, 5, 5, 15, 150]


def test_planted_clusters_are_recovered_with_k_equal_to_planted() -> None:
    items, _, labels = planted_vectors()
    result = build_soft_clusters(items, k=5)
    primary = {m.item_id: m.cluster for m in result.memberships if m.rank == 0}
    # Each planted group maps onto exactly one cluster and vice versa.
    mapping = {(labels[i], primary[item_id]) for i, (item_id, _) in enumerate(items)}
    assert len(mapping) == 5
    assert len({c for _, c in mapping}) == 5
    assert result.hard_sizes.tolist() == [40] * 5
    assert result.soft_sizes.sum() == 3 * 200


def test_default_k_splits_but_never_mixes_planted_groups() -> None:
    items, _, labels = planted_vectors()
    result = build_soft_clusters(items)
    assert result.k == choose_k(200) == 21
    primary = {m.item_id: m.cluster for m in result.memberships if m.rank == 0}
    owner: dict[int, int] = {}
    for i, (item_id, _) in enumerate(items):
        assert owner.setdefault(primary[item_id], labels[i]) == labels[i]


def test_bridging_items_get_both_clusters_and_link_them() -> None:
    items, centres, _ = planted_vectors()
    bridges = [(f"bridge{j}", (centres[0] + centres[1]) / 2 + j * 0.01) for j in range(3)]
    result = build_soft_clusters(items + bridges, k=5, min_similarity=0.5)
    cluster_of = {m.item_id: m.cluster for m in result.memberships if m.rank == 0}
    a, b = cluster_of["c0-0"], cluster_of["c1-0"]
    for item_id, _ in bridges:
        got = {m.cluster: m.similarity for m in result.memberships if m.item_id == item_id}
        assert set(got) == {a, b}
        assert all(0.6 < s < 0.8 for s in got.values())  # cos 45° ≈ 0.707
    # With weak memberships cut off, only the bridges connect clusters.
    assert result.adjacency[a, b] == result.adjacency[b, a] == 3
    assert result.adjacency.sum() == 6
    assert neighbours(a, result.adjacency) == [b]
    assert neighbours(a, result.adjacency, min_shared=4) == []
    assert np.all(np.diag(result.adjacency) == 0)


def test_top_three_memberships_without_cut_off() -> None:
    items, _, _ = planted_vectors()
    result = build_soft_clusters(items, k=5)
    per_item: dict[str, list[int]] = {}
    for m in result.memberships:
        per_item.setdefault(m.item_id, []).append(m.rank)
    assert all(ranks == [0, 1, 2] for ranks in per_item.values())
    sims = [m.similarity for m in result.memberships if m.item_id == "c2-0"]
    assert sims == sorted(sims, reverse=True)
    assert result.adjacency.sum() == 200 * 3 * 2  # three pairs per item, both directions


def test_deterministic_for_a_fixed_seed() -> None:
    rng = np.random.default_rng(0)
    items = [(i, rng.normal(size=DIM)) for i in range(500)]
    one = build_soft_clusters(items, seed=11)
    two = build_soft_clusters(items, seed=11)
    assert one.memberships == two.memberships
    assert np.array_equal(one.centroids, two.centroids)
    assert np.array_equal(one.adjacency, two.adjacency)


def test_skips_unusable_vectors_and_counts_them() -> None:
    items, _, _ = planted_vectors(per_cluster=4)
    bad = [
        ("none", None),
        ("short", np.ones(DIM - 1)),
        ("zero", np.zeros(DIM)),
        ("nan", np.full(DIM, np.nan)),
    ]
    result = build_soft_clusters(bad[:1] + items + bad[1:])
    assert result.skipped == 4
    assert {m.item_id for m in result.memberships} == {i for i, _ in items}


def test_degenerate_sizes() -> None:
    empty = build_soft_clusters([])
    assert (empty.k, empty.memberships, empty.skipped) == (0, (), 0)
    assert build_soft_clusters([("x", None)]).skipped == 1

    one = build_soft_clusters([("only", [0.0, 3.0, 4.0])])
    assert one.k == 1
    assert one.memberships[0].similarity == pytest.approx(1.0)
    assert one.memberships[0].cluster == 0

    three = build_soft_clusters([(i, np.eye(4)[i]) for i in range(3)])
    assert three.k == 3  # N < 5
    assert {m.item_id for m in three.memberships if m.rank == 0} == {0, 1, 2}

    same = build_soft_clusters([(i, [1.0, 2.0]) for i in range(10)])
    assert same.k == 1  # one distinct vector: one cluster, and no warning
    assert len(same.memberships) == 10


def test_nearest_clusters_and_routing() -> None:
    items, centres, _ = planted_vectors()
    result = build_soft_clusters(items, k=5)
    hit = nearest_clusters(centres[3], result.centroids, top_m=2)
    primary = {m.item_id: m.cluster for m in result.memberships if m.rank == 0}
    assert hit[0][0] == primary["c3-0"]
    assert hit[0][1] > 0.99
    with pytest.raises(ValueError, match="dimension"):
        nearest_clusters(np.ones(3), result.centroids)

    adjacency = np.array([[0, 5, 1, 0], [5, 0, 0, 2], [1, 0, 0, 0], [0, 2, 0, 0]])
    assert neighbours(0, adjacency) == [1, 2]
    assert neighbours(0, adjacency, min_shared=2) == [1]
    with pytest.raises(ValueError, match="does not exist"):
        neighbours(9, adjacency)
