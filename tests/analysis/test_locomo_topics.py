"""Topics on real facts: LoCoMo `session_N_observation`, one conversation at a time."""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers import shared_data
from tideline.analysis import build_topics

# A recurring theme of each conversation that a reader of it would name.
KNOWN_THEMES = {
    "conv-26": ["lgbtq", "paint", "adopt", "potteri"],
    "conv-30": ["studio", "busi", "fashion"],
    "conv-42": ["screenplay", "turtl", "tournament"],
    "conv-43": ["basketbal", "fantasi", "potter"],
}


def observations(name: str) -> tuple[list[tuple[str, str]], list[str]]:
    path = shared_data("locomo", f"{name}.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    docs = []
    for key, by_speaker in data.items():
        if re.fullmatch(r"session_\d+_observation", key):
            for facts in by_speaker.values():
                for text, dia_id in facts:
                    docs.append((f"{key}:{len(docs)}:{dia_id}", text))
    return docs, [data["speaker_a"], data["speaker_b"]]


@pytest.mark.parametrize("name", sorted(KNOWN_THEMES))
def test_known_themes_emerge(name: str) -> None:
    docs, speakers = observations(name)
    topics = {t.keyword: t for t in build_topics(docs)}
    for theme in KNOWN_THEMES[name]:
        assert theme in topics, (theme, sorted(topics)[:50])
    # The speakers' names are in nearly every fact: generic, not a topic.
    labels = {t.label for t in topics.values()}
    assert not labels & set(speakers)


def test_topic_members_really_contain_the_keyword() -> None:
    docs, _ = observations("conv-26")
    text = dict(docs)
    topics = {t.keyword: t for t in build_topics(docs)}
    painting = topics["paint"]
    assert painting.df >= 10
    assert all("paint" in text[nid].lower() for nid in painting.member_ids)
    outside = [nid for nid, body in docs if nid not in painting.member_ids]
    assert not any(re.search(r"\bpaint", text[nid].lower()) for nid in outside)
