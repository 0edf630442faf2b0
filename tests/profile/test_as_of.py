"""The profile as it stood on a date in the user's time (`Profile.as_of`), on both engines.

A spring of 2023 recorded in 2026: Tokyo from 8 May (confirmed by a second mention on 20 May),
a passing mood on 10 May (7 days), a move to Osaka on 9 June that closes Tokyo then, a camping
weekend (24–25 June, relevant for 14 days), Aiko dating in May and married in June.
"""

from __future__ import annotations

import pytest

from tideline.errors import InvalidInput
from tideline.memory import Memory
from tideline.profile import EventDraft, FactDraft, PersonMention, Profile, settle

pytestmark = pytest.mark.engines


def spring(profile: Profile, memory: Memory) -> dict[str, int]:
    def said(text: str, at: str) -> int:
        return memory.sync_turn("spring", "user", text, timestamp=at).id

    t1 = said("I live in Tokyo with Aiko.", "2023-05-08T09:00:00Z")
    t2 = said("Exhausted this week.", "2023-05-10T09:00:00Z")
    t3 = said("Tokyo is so hot already.", "2023-05-20T09:00:00Z")
    t4 = said("We moved to Osaka!", "2023-06-09T09:00:00Z")
    cs = profile.read().changeset()
    tokyo = cs.add_fact(FactDraft("user", "city", "Tokyo", decay_days=365), turn_ids=(t1,))
    mood = cs.add_fact(FactDraft("user", "mood", "exhausted", decay_days=7), turn_ids=(t2,))
    cs.mention(PersonMention("Aiko", "girlfriend", status="dating", said_at="2023-05-08T09:00:00Z"))
    applied = profile.apply(cs)
    ids = {"tokyo": applied.ids[tokyo], "mood": applied.ids[mood]}
    cs = profile.read().changeset()
    cs.support(ids["tokyo"], turn_ids=(t3,))
    cs.confirm(ids["tokyo"], "said again")
    profile.apply(cs)
    cs = profile.read().changeset()
    osaka = cs.add_fact(FactDraft("user", "city", "Osaka"), turn_ids=(t4,), supersedes=ids["tokyo"])
    cs.mention(PersonMention("Aiko", status="married", said_at="2023-06-01T12:00:00Z"))
    camping = EventDraft(
        "camping weekend",
        decay_days=14,
        valid_from="2023-06-24T00:00:00Z",
        valid_to="2023-06-25T23:59:59Z",
        said_at="2023-06-27T10:37:00Z",
        phrase="last weekend",
    )
    cs.add_event(camping)
    ids["osaka"] = profile.apply(cs).ids[osaka]
    view = profile.read()
    cs = view.changeset()
    settle(cs, view.disputed_pairs()[0], accept_new=True, why="they moved")
    profile.apply(cs)
    return ids


def values(profile: Profile, day: str) -> dict[str, tuple[str, int]]:
    return {f.value: (f.status, f.mention_count) for f in profile.as_of(day).facts}


def test_as_of_shows_what_was_believed_then(profile: Profile, memory: Memory) -> None:
    spring(profile, memory)
    assert values(profile, "2022-12-31") == {}
    assert values(profile, "2023-05-09") == {"Tokyo": ("suspected", 1)}
    assert values(profile, "2023-05-12") == {
        "Tokyo": ("suspected", 1),
        "exhausted": ("suspected", 1),
    }
    # the second mention confirmed Tokyo on the 20th; the mood lapsed after its 7 days
    assert values(profile, "2023-05-21") == {"Tokyo": ("confirmed", 2)}
    assert values(profile, "2023-06-15") == {"Osaka": ("suspected", 1)}  # Tokyo ended 9 June
    assert values(profile, "2023-06-09T08:59:59Z") == {"Tokyo": ("confirmed", 2)}


def test_as_of_a_fact_is_backed_by_what_was_said_by_then(profile: Profile, memory: Memory) -> None:
    """Its span, sessions and confidence are those of the evidence said by then, not today's."""
    spring(profile, memory)
    [early] = [f for f in profile.as_of("2023-05-09").facts if f.value == "Tokyo"]
    assert (early.said_from, early.said_to, early.sessions) == (
        "2023-05-08T09:00:00Z", "2023-05-08T09:00:00Z", 1,
    )  # fmt: skip
    [later] = [f for f in profile.as_of("2023-05-21").facts if f.value == "Tokyo"]
    assert later.said_to == "2023-05-20T09:00:00Z"
    assert early.confidence == later.confidence == profile.fact(later.id).confidence  # one session


def test_as_of_shows_the_events_people_and_text_of_then(profile: Profile, memory: Memory) -> None:
    spring(profile, memory)
    may = profile.as_of("2023-05-09")
    assert [(p.name, p.status) for p in may.relationships] == [("Aiko", "dating")]
    assert may.events == [] and may.as_of == "2023-05-09T23:59:59Z"
    june = profile.as_of("2023-06-30")
    assert [(p.name, p.status) for p in june.relationships] == [("Aiko", "married")]
    assert [e.title for e in june.events] == ["camping weekend"]
    assert june.text.startswith("# What I knew as of 2023-06-30 (the user's time)")
    assert "Osaka" in june.text and "Tokyo" not in june.text and "camping weekend" in june.text
    assert profile.as_of("2023-07-10").events == []  # 14 days after the weekend: past
    evidence = profile.as_of("2023-05-09").facts[0].evidence
    assert [e.said_at for e in evidence] == ["2023-05-08T09:00:00Z"]  # not what came later


def test_as_of_filters_like_the_profile(profile: Profile, memory: Memory) -> None:
    spring(profile, memory)
    at = "2023-05-12"
    assert [f.value for f in profile.as_of(at, category="mood").facts] == ["exhausted"]
    assert profile.as_of(at, status="confirmed").facts == []
    assert profile.as_of(at, subject="Aiko").facts == []


@pytest.mark.parametrize("bad", ["last tuesday", "2023-13-01", "   "])
def test_a_bad_date_is_one_line_that_says_what_to_give(profile: Profile, bad: str) -> None:
    with pytest.raises(InvalidInput) as exc:
        profile.as_of(bad)
    message = str(exc.value)
    assert (
        "\n" not in message and "as_of" in message and "2023-06-15" in message
    ) or "e.g." in message
