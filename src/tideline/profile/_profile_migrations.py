"""The profile's migrations, applied to the agent database after memory's.

Each owner creates its own tables (`create_tables`); this module only fixes their order and number.
The owners are imported by the steps that use them: opening a database that is up to date (every
`tideline search`) imports none of them (issue 34: start-up).
"""

from __future__ import annotations

from tideline.store import Migrations, Storage

PROFILE_MIGRATIONS = Migrations("profile")


@PROFILE_MIGRATIONS.step(1)
def _profile_tables(db: Storage) -> None:
    from tideline.profile._edges import EdgeStore
    from tideline.profile._events import EventStore
    from tideline.profile._facts import FactStore
    from tideline.profile._observations import ObservationStore
    from tideline.profile._people import RelationshipStore
    from tideline.profile._portrait import PortraitStore
    from tideline.profile._profile_version import VersionStore
    from tideline.profile._sleep_runs import RunStore
    from tideline.profile._strategies import StrategyStore

    for owner in (
        ObservationStore,
        FactStore,
        RelationshipStore,
        EventStore,
        EdgeStore,
        StrategyStore,
        PortraitStore,
        RunStore,
        VersionStore,
    ):
        owner.create_tables(db)


@PROFILE_MIGRATIONS.step(2)
def _digests_and_fact_index(db: Storage) -> None:
    """What Sleep's extraction says of each session; facts made searchable, and their themes."""
    from tideline.profile._digests import DigestStore
    from tideline.profile._fact_index import FactIndex

    DigestStore.create_tables(db)
    FactIndex.create_tables(db)


@PROFILE_MIGRATIONS.step(3)
def _two_clocks(db: Storage) -> None:
    """Valid time (when it was said or true, from the turns' own timestamps) beside record time
    (when Tideline learnt or retired it) on everything the profile holds; rows written before,
    when every time was the processing time, get their valid times from their evidence turns."""
    from tideline.memory import session_span, turn_times
    from tideline.profile._digests import DigestStore
    from tideline.profile._edges import EdgeStore
    from tideline.profile._events import EventStore
    from tideline.profile._facts import FactStore
    from tideline.profile._observations import ObservationStore
    from tideline.profile._people import RelationshipStore
    from tideline.profile._portrait import PortraitStore
    from tideline.profile._strategies import StrategyStore

    owners = (
        FactStore,
        ObservationStore,
        EventStore,
        RelationshipStore,
        EdgeStore,
        StrategyStore,
        PortraitStore,
        DigestStore,
    )
    for owner in owners:
        owner.add_two_clocks(db)
    observations, facts = ObservationStore(db), FactStore(db)
    turn_at = turn_times(db, sorted(observations.turn_ids() | facts.evidence_turn_ids()))
    facts.backfill_two_clocks(turn_at, observations.backfill_two_clocks(turn_at))
    spans = facts.spans()
    EdgeStore(db).backfill_two_clocks(spans)
    StrategyStore(db).backfill_two_clocks(spans)
    DigestStore(db).backfill_two_clocks(lambda s, a, t: session_span(db, s, a, t))


@PROFILE_MIGRATIONS.step(4)  # 3 is the clock stream's (valid and record time)
def _strategy_outcomes(db: Storage) -> None:
    """How a strategy ended; the ones still open about a fact already retired end obsolete,
    at the time their fact was retired."""
    from tideline.profile._facts import FactStore
    from tideline.profile._strategies import StrategyStore, retired_why

    StrategyStore.add_outcomes(db)
    strategies = StrategyStore(db)
    for fact_id, status, why, at in FactStore.retired(db, StrategyStore.waiting_facts(db)):
        strategies.obsolete_for([fact_id], retired_why(fact_id, status, why), at)


@PROFILE_MIGRATIONS.step(5)
def _strategy_dream_runs(db: Storage) -> None:
    """Which dream run made a strategy (combing's probes had no run id at all)."""
    from tideline.profile._strategies import StrategyStore

    StrategyStore.add_dream_run(db)


@PROFILE_MIGRATIONS.step(6)
def _runs_may_be_skipped(db: Storage) -> None:
    """A sleep with no LLM to run its LLM steps is recorded `skipped`, not `done`."""
    from tideline.profile._sleep_runs import RunStore

    RunStore.allow_skipped(db)


@PROFILE_MIGRATIONS.step(7)
def _fact_priors(db: Storage) -> None:
    """The confidence each fact was created with: evidence moves it from there (`_backing`)."""
    from tideline.profile._facts import FactStore

    FactStore.add_prior(db)
