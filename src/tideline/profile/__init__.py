"""The profile: facts with a lifecycle, their evidence, people, events, the knowledge graph,
strategies, the user model, trajectory, snapshots and Sleep run records (after Riverse).

`Profile` is the service; `Changeset` is how the Sleep pipeline writes; the rule functions
(`check_transition`, `matured_decay`, `injection_weight`, `plan_*`, ...) are pure and need no database.
"""

import typing as _typing

from tideline.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tideline.errors import IllegalTransition, ProfileChanged
    from tideline.profile._apply import Applied
    from tideline.profile._as_of import ProfileAt
    from tideline.profile._calendar import content_words, event_window, time_window
    from tideline.profile._changeset import Because, Changeset, Ref, TrajectoryFields
    from tideline.profile._decay import (
        ANCHOR_FACTOR,
        MATURITY,
        Rung,
        expires_at,
        injection_weight,
        is_expired,
        matured_decay,
        thresholds,
    )
    from tideline.profile._dedupe import Duplicates, duplicates, fact_key, normalise
    from tideline.profile._digests import SessionDigest
    from tideline.profile._disputes import DisputedPair, disputed_pairs, may_close, settle
    from tideline.profile._drafts import (
        DEFAULT_DECAY_DAYS,
        MAX_NAME,
        MAX_TEXT,
        EventDraft,
        FactDraft,
        ObservationDraft,
        PersonMention,
    )
    from tideline.profile._fact_index import Theme, fact_text
    from tideline.profile._lifecycle import (
        FACT_NEXT,
        FAST_PATH_MENTIONS,
        RULES,
        STRATEGY_DAYS,
        STRATEGY_NEXT,
        Rules,
        check_live,
        check_strategy,
        check_transition,
        confirmable,
        establishable,
        fast_path,
        span_days,
    )
    from tideline.profile._mentions import merge_mention, person_key
    from tideline.profile._plans import (
        event_expiry,
        plan_dedupe,
        plan_established,
        plan_expiry,
        plan_fast_path,
        plan_maturity,
        plan_strategies,
        verify_question,
    )
    from tideline.profile._profile import Profile
    from tideline.profile._profile_migrations import PROFILE_MIGRATIONS
    from tideline.profile._records import (
        EDGE_KINDS,
        OBSERVATION_TYPES,
        STRATEGY_KINDS,
        ActiveFact,
        Edge,
        Event,
        Evidence,
        Fact,
        FactTimeline,
        Observation,
        Relationship,
        SleepRun,
        Snapshot,
        StatusChange,
        Strategy,
        Trajectory,
        UserModelEntry,
    )
    from tideline.profile._snapshot import (
        ProfileState,
        event_line,
        person_line,
        render_snapshot,
        trajectory_lines,
    )
    from tideline.profile._statuses import ACTIVE_STATUSES, STATUSES
    from tideline.profile._valid import end_at, first_said, last_said, question_time
    from tideline.profile._view import ProfileView

__all__ = [
    "ACTIVE_STATUSES",
    "ANCHOR_FACTOR",
    "DEFAULT_DECAY_DAYS",
    "EDGE_KINDS",
    "FACT_NEXT",
    "FAST_PATH_MENTIONS",
    "MATURITY",
    "MAX_NAME",
    "MAX_TEXT",
    "OBSERVATION_TYPES",
    "PROFILE_MIGRATIONS",
    "RULES",
    "STATUSES",
    "STRATEGY_DAYS",
    "STRATEGY_KINDS",
    "STRATEGY_NEXT",
    "ActiveFact",
    "Applied",
    "Because",
    "Changeset",
    "DisputedPair",
    "Duplicates",
    "Edge",
    "Event",
    "EventDraft",
    "Evidence",
    "Fact",
    "FactDraft",
    "FactTimeline",
    "IllegalTransition",
    "Observation",
    "ObservationDraft",
    "PersonMention",
    "Profile",
    "ProfileAt",
    "ProfileChanged",
    "ProfileState",
    "ProfileView",
    "Ref",
    "Relationship",
    "Rules",
    "Rung",
    "SessionDigest",
    "SleepRun",
    "Snapshot",
    "StatusChange",
    "Strategy",
    "Theme",
    "Trajectory",
    "TrajectoryFields",
    "UserModelEntry",
    "check_live",
    "check_strategy",
    "check_transition",
    "confirmable",
    "content_words",
    "disputed_pairs",
    "duplicates",
    "end_at",
    "establishable",
    "event_expiry",
    "event_line",
    "event_window",
    "expires_at",
    "fact_key",
    "fact_text",
    "fast_path",
    "first_said",
    "injection_weight",
    "is_expired",
    "last_said",
    "matured_decay",
    "may_close",
    "merge_mention",
    "normalise",
    "person_key",
    "person_line",
    "plan_dedupe",
    "plan_established",
    "plan_expiry",
    "plan_fast_path",
    "plan_maturity",
    "plan_strategies",
    "question_time",
    "render_snapshot",
    "settle",
    "span_days",
    "thresholds",
    "time_window",
    "trajectory_lines",
    "verify_question",
]

__getattr__, __dir__ = _lazy_exports(__name__)
