"""Entity-role parsing, co-occurrence counts, stable roles and DOT output."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from tideline.analysis import build_entity_graph, to_dot
from tideline.memory import MalformedPart, parse_entities_role


def test_parse_ascii_and_full_width() -> None:
    assert parse_entities_role("A=判断+执行; B=审查") == (
        {"A": ["判断", "执行"], "B": ["审查"]},
        [],
    )
    roles, bad = parse_entities_role("照照＝审查／架构；我＝执行＋判断，甜心：设计、验收")
    assert roles == {"照照": ["审查", "架构"], "我": ["执行", "判断"], "甜心": ["设计", "验收"]}
    assert bad == []
    assert parse_entities_role("A = x + y ,A=y+z") == ({"A": ["x", "y", "z"]}, [])
    assert parse_entities_role(None) == ({}, [])
    assert parse_entities_role("  ") == ({}, [])


def test_malformed_parts_are_reported_and_skipped() -> None:
    roles, bad = parse_entities_role("A=ok; broken; =x; C=; D=a=b", narrative_id=42)
    assert roles == {"A": ["ok"]}
    assert bad == [
        MalformedPart(42, "broken", "no '=' between entity and roles"),
        MalformedPart(42, "=x", "empty entity name"),
        MalformedPart(42, "C=", "no role after '='"),
        MalformedPart(42, "D=a=b", "more than one '='"),
    ]


def test_a_name_with_a_colon_is_read_when_the_roles_follow_an_equals_sign() -> None:
    """#21: "Dr. Who: the doctor=friend" was refused ("more than one '='")."""
    assert parse_entities_role("Dr. Who: the doctor=friend; Ana: companion") == (
        {"Dr. Who: the doctor": ["friend"], "Ana": ["companion"]},
        [],
    )
    assert parse_entities_role("Ana=lead: design+review") == (
        {"Ana": ["lead: design", "review"]},
        [],
    )
    _, bad = parse_entities_role("Dr. Who: the doctor: friend", narrative_id=7)
    assert bad == [
        MalformedPart(
            7,
            "Dr. Who: the doctor: friend",
            "more than one ':'; put '=' between the entity and its roles",
        )
    ]


def planted_graph_input() -> list[tuple[int, str | None]]:
    """照照 reviews in 4 of 5 memories; 甜心 changes role; 阿洄 executes in 3 of 6 (50%)."""
    return [
        (1, "照照=审查; 阿洄=执行"),
        (2, "照照=审查+架构; 阿洄=执行; 甜心=设计"),
        (3, "照照=审查; 甜心=验收"),
        (4, "照照=审查; 阿洄=执行"),
        (5, "照照=架构; 甜心=判断"),
        (6, "阿洄=判断"),
        (7, "阿洄=提问"),
        (8, "阿洄=记录; broken"),
        (9, None),
        (10, "新人=审查; 新人=审查"),
        (11, "新人=审查"),
    ]


def test_counts_and_stable_roles() -> None:
    graph = build_entity_graph(planted_graph_input())
    assert graph.entity_memories == {"照照": 5, "阿洄": 6, "甜心": 3, "新人": 2}
    assert graph.pair_counts[("照照", "阿洄")] == 3
    assert graph.pair_counts[("照照", "甜心")] == 3
    assert graph.pair_counts[("甜心", "阿洄")] == 1
    assert graph.pair_role_counts[("照照", "阿洄")][("审查", "执行")] == 3
    assert graph.pair_role_counts[("照照", "阿洄")][("架构", "执行")] == 1
    assert graph.role_patterns[("审查", "执行")] == 3
    stable = {(s.entity, s.role): (s.count, s.memories, s.share) for s in graph.stable_roles}
    # 照照 审查 4/5; 阿洄 执行 is 3/6 = 50% < 60%; 新人 审查 2/2 but < 3 memories.
    assert stable == {("照照", "审查"): (4, 5, 0.8)}
    assert graph.malformed == [MalformedPart(8, "broken", "no '=' between entity and roles")]


def test_stable_role_thresholds_are_parameters() -> None:
    graph = build_entity_graph(planted_graph_input(), min_memories=2, min_share=0.5)
    found = {(s.entity, s.role) for s in graph.stable_roles}
    assert {("照照", "审查"), ("阿洄", "执行"), ("新人", "审查")} <= found


def test_to_dict_is_json_and_sorted() -> None:
    data = build_entity_graph(planted_graph_input()).to_dict()
    assert json.loads(json.dumps(data, ensure_ascii=False)) == data
    assert [e["name"] for e in data["entities"]][:2] == ["阿洄", "照照"]
    assert data["entities"][1]["stable_roles"] == [{"role": "审查", "count": 4, "share": 0.8}]
    assert data["edges"][0]["weight"] == 3
    assert data["malformed"] == [
        {"narrative_id": 8, "part": "broken", "reason": "no '=' between entity and roles"}
    ]
    assert build_entity_graph([]).to_dict()["entities"] == []


QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def test_dot_escapes_quotes_backslashes_and_newlines() -> None:
    graph = build_entity_graph([(1, 'Bob "the" \\builder=review; Ann=lead'), (2, "Ann=lead")])
    dot = to_dot(graph)
    assert '"Bob \\"the\\" \\\\builder"' in dot
    assert '"Ann" -- "Bob \\"the\\" \\\\builder" [label="1", weight=1];' in dot
    # Outside quoted strings only DOT syntax remains: no stray quotes or backslashes.
    bare = QUOTED.sub("S", dot)
    assert '"' not in bare and "\\" not in bare
    assert dot.startswith('graph "entities" {') and dot.rstrip().endswith("}")


def test_dot_parses_with_graphviz_when_installed() -> None:
    dot_binary = shutil.which("dot")
    if dot_binary is None:
        pytest.skip("graphviz is not installed; the escaping test covers the syntax")
    graph = build_entity_graph([*planted_graph_input(), (99, 'Q"x\\=a\nb; R=c')])
    subprocess.run(
        [dot_binary, "-Tsvg"], input=to_dot(graph), text=True, check=True, capture_output=True
    )
