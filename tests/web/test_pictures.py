"""Pictures that say something at every size: for 0 to 50 memories each picture on /pictures
draws something or says in one sentence what it needs; the topic map appears for a small
memory; graph labels overlap nothing; the weights' axis is the user's time, not the import's."""

from __future__ import annotations

import html
import itertools
import re

import pytest
from starlette.testclient import TestClient

from tests.web.overlaps import overlaps
from tideline.analysis.scripts import run_all
from tideline.app import Tideline
from tideline.web._graph_layout import Box, fit, place, text_width
from tideline.web._pictures import graph_layout, time_ticks
from tideline.web.panel import when

THEMES = [
    ("Sailed the boat Heron to the island with Ana", "Ana: crew; Heron: boat"),
    ("Fixed the Heron's mast before the regatta", "Heron: boat; Ana: crew"),
    ("Baked sourdough bread with Leo", "Leo: baker"),
    ("The sourdough starter died in the heat", "Leo: baker"),
    ("Japanese grammar with Kenji every Tuesday", "Kenji: teacher"),
]
SECTIONS = ("Attention heatmap", "Topic map", "Entity graph", "Weights over time")


def remember(app: Tideline, n: int) -> None:
    """`n` memories on a few themes, each from a turn said in 2024 (an imported year)."""
    for i in range(n):
        gesture, roles = THEMES[i % len(THEMES)]
        month = i % 12 + 1
        turn = app.memory.sync_turn(
            f"import/chat {i}",
            "user",
            gesture,
            timestamp=f"2024-{month:02d}-0{i % 9 + 1}T10:00:00Z",
        )
        app.memory.write(gesture=f"{gesture} ({i})", entities_role=roles, source_links=[turn.id])


def sections(page: str) -> dict[str, str]:
    parts = re.split(r"<h2>", page)
    return {title: part for part in parts[1:] for title in SECTIONS if part.startswith(title)}


def explains(part: str) -> str:
    """The one sentence a section says instead of a picture ('' when it draws one)."""
    if "<svg" in part:
        return ""
    found = re.search(r'<p class="muted">(.*?)</p>', part, re.S)
    assert found, part
    sentence = html.unescape(re.sub("<[^>]+>", "", found.group(1))).strip()
    assert sentence.endswith(".") and sentence.count(". ") == 0, sentence  # one sentence
    return sentence


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 11, 15, 50])
def test_every_picture_draws_or_says_why(agent: Tideline, client: TestClient, n: int) -> None:
    remember(agent, n)
    before = sections(client.get("/pictures").text)
    if n >= 3:
        said = explains(before["Topic map"])
        assert "tideline scripts topics" in said and f"from the {n} memories" in said
    run_all(agent.memory, steps=("topics", "graph"))
    found = sections(client.get("/pictures").text)
    assert set(found) == set(SECTIONS)
    for title, part in found.items():
        sentence = explains(part)
        assert sentence or "<svg" in part, title
    if n >= 3:  # 11 memories had no topic map: 20% of 11 is 2.2, under the 3 a topic needed
        assert "<svg" in found["Topic map"], explains(found["Topic map"])
    elif n:
        assert "needs 3 memories or more" in explains(found["Topic map"])
    if n:
        assert "<svg" in found["Entity graph"] and "<svg" in found["Weights over time"]
        assert "said from 2024-01" in found["Weights over time"] or n == 1
        assert "2026" not in re.sub(r"<title>.*?</title>", "", found["Weights over time"])
    else:
        assert "No memories yet" in explains(found["Weights over time"])


def test_weights_over_time_span_the_imported_year(agent: Tideline, client: TestClient) -> None:
    """It spanned "2026-12-01 – 2026-12-01": the day of the import, not the year said."""
    remember(agent, 12)
    part = sections(client.get("/pictures").text)["Weights over time"]
    assert "said from 2024-01-01 to 2024-12-03" in part
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', part)
    assert ticks[0] == "2024-01" and ticks[-1] >= "2024-10" and len(ticks) <= 7, ticks
    agent.memory.write(gesture="Written today, about nothing said")  # no source turns: hollow
    part = sections(client.get("/pictures").text)["Weights over time"]
    assert part.count('class="written"') == 1 and "Hollow: 1 memory without source turns" in part


@pytest.mark.parametrize("count", [1, 2, 5, 12, 40])
def test_graph_labels_overlap_nothing(count: int) -> None:
    names = ["Ana", "Heron", "Анна Каренина", "東京の友達", "Dr. Wolfgang Amadeus Mozart", "W" * 30]
    entities = [
        {"name": f"{names[i % len(names)]} {i}", "memories": 1 + (i * 7) % 5, "roles": {"x": 1}}
        for i in range(count)
    ]
    edges = [
        {"source": entities[i]["name"], "target": entities[(i * 3 + 1) % count]["name"],
         "weight": 1 + i % 3, "role_pairs": []}
        for i in range(count) if count > 1 and (i * 3 + 1) % count != i
    ]  # fmt: skip
    drawn = graph_layout({"entities": entities, "edges": edges})
    centres = [(n["x"], n["y"]) for n in drawn["nodes"]]
    radii = [n["r"] for n in drawn["nodes"]]
    boxes = [Box(n["lx"], n["ly"] - 12, n["lw"], 16) if n["label"] else None for n in drawn["nodes"]]  # fmt: skip
    assert overlaps(centres, radii, boxes) == []
    assert all(b is not None for b in boxes)  # every name found a place
    for box in boxes:
        assert box is not None and box.x >= 0 and box.x + box.w <= drawn["width"]
        assert box.y >= 0 and box.y + box.h <= drawn["height"]
    for (x1, y1), r1 in zip(centres, radii, strict=True):  # circles apart
        for (x2, y2), r2 in zip(centres, radii, strict=True):
            if (x1, y1) != (x2, y2):
                assert (x1 - x2) ** 2 + (y1 - y2) ** 2 >= (r1 + r2) ** 2


def test_label_helpers() -> None:
    assert text_width("東京") == 24 and text_width("ab") < text_width("AB")
    assert fit("a short one", 500) == "a short one"
    cut = fit("Dr. Wolfgang Amadeus Mozart", 60)
    assert cut.endswith("…") and text_width(cut) <= 60
    assert fit("東京", 5) == ""
    _, boxes, height = place(__import__("numpy").array([[0.5, 0.5]]), [10.0], ["solo"])
    assert boxes[0] is not None and height >= 240


def test_times_people_read() -> None:
    import datetime as dt

    utc = dt.UTC
    assert [t for _, t in time_ticks(dt.datetime(2023, 3, 5, tzinfo=utc), dt.datetime(2026, 1, 1, tzinfo=utc))] == ["2023", "2024", "2025", "2026"]  # fmt: skip
    assert time_ticks(dt.datetime(2024, 5, 1, tzinfo=utc), dt.datetime(2024, 5, 1, tzinfo=utc)) == [(dt.datetime(2024, 5, 1, tzinfo=utc), "2024-05-01")]  # fmt: skip
    assert when(1796111438.68) == "2026-12-01 07:50 UTC"
    assert when("2026-12-01T10:04:05Z") == "2026-12-01 10:04 UTC" and when(None) == ""


def test_memories_said_at_once_are_each_a_dot(agent: Tideline, client: TestClient) -> None:
    for i in range(9):
        agent.memory.write(gesture=f"One of nine written in the same second {i}")
    part = sections(client.get("/pictures").text)["Weights over time"]
    spots = re.findall(r'<circle class="written" cx="([\d.]+)" cy="([\d.]+)"', part)
    assert len(spots) == 9 and len(set(spots)) == 9


def test_tick_labels_never_touch() -> None:
    from tideline.web._pictures import Moment, weight_dots

    for start, end in (("2026-11-02", "2026-12-01"), ("2024-01-01", "2024-12-31"), ("2019-05-05", "2026-01-01")):  # fmt: skip
        drawn = weight_dots([Moment(1, f"{start}T10:00:00Z", True, 0.5, "a"), Moment(2, f"{end}T10:00:00Z", True, 0.5, "b")])  # fmt: skip
        spans = []
        for t in drawn["ticks"]:
            w = text_width(t["label"])
            left = {"start": t["x"], "middle": t["x"] - w / 2, "end": t["x"] - w}[t["anchor"]]
            assert left >= 0 and left + w <= drawn["width"], t
            spans.append((left, left + w))
        assert all(a[1] < b[0] for a, b in itertools.pairwise(spans)), spans
