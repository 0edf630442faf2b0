"""The profile's errors: one line naming the fact, the rule and the fix."""

from __future__ import annotations

from tideline.errors import InvalidInput, TidelineError


class IllegalTransition(InvalidInput):
    """A status change the fact lifecycle does not allow (e.g. reopening a closed fact)."""


class ProfileChanged(TidelineError):
    """The profile was written after a changeset was computed; recompute it from a fresh read."""

    transient = True
