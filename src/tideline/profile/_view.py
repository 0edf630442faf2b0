"""What the Sleep pipeline reads before it thinks: one consistent picture of the profile.

It carries the `version` it was read at; `changeset()` starts a changeset against that version,
so applying it later is refused if anything was written in between.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from tideline.profile._changeset import Changeset
from tideline.profile._disputes import DisputedPair, disputed_pairs
from tideline.profile._records import (
    Event,
    Fact,
    Relationship,
    Strategy,
    Trajectory,
    UserModelEntry,
)


@dataclass
class ProfileView:
    version: int
    now: dt.datetime
    facts: list[Fact]  # suspected, confirmed and established (expired ones included until closed)
    events: list[Event]  # active
    relationships: list[Relationship]
    strategies: list[Strategy]  # open and asked
    user_model: list[UserModelEntry]
    trajectory: Trajectory | None
    processed: dict[int, int] = field(default_factory=dict)  # session → last turn digested
    questioned: list[Fact] = field(default_factory=list)  # retired facts open strategies name

    @property
    def anchors(self) -> set[int]:
        return set() if self.trajectory is None else self.trajectory.anchor_fact_ids

    def changeset(self) -> Changeset:
        return Changeset(base_version=self.version)

    def disputed_pairs(self) -> list[DisputedPair]:
        return disputed_pairs(self.facts)
