"""The clock seam and the one stored time form.

An app built on a `ManualClock` stamps everything it records with that clock's time (a replay of
a year runs in seconds), and every time column of the agent database, whoever owns it, holds the
one stored form `YYYY-MM-DDTHH:MM:SSZ`.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tideline.analysis.scripts import run_all
from tideline.app import Tideline
from tideline.clock import FORMAT, ManualClock, from_text, parse_time, to_text
from tideline.config import Settings
from tideline.errors import InvalidInput
from tideline.profile import FactDraft

START = dt.datetime(2023, 5, 8, 13, 56, tzinfo=dt.UTC)
STORED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def test_the_manual_clock_moves_only_when_told() -> None:
    clock = ManualClock(dt.datetime(2023, 5, 8, 13, 56))  # naive: read as UTC
    assert clock() == START and clock() == START
    assert clock.advance(days=365) == START + dt.timedelta(days=365)
    assert clock.set(START) == START


def test_the_stored_form_round_trips_and_parses_what_people_send() -> None:
    assert to_text(START) == "2023-05-08T13:56:00Z" == START.strftime(FORMAT)
    assert from_text("2023-05-08T13:56:00Z") == START
    assert to_text(dt.datetime(1, 1, 1, tzinfo=dt.UTC)) == "0001-01-01T00:00:00Z"  # sorts first
    assert parse_time("2023-05-08T15:56:00+02:00") == "2023-05-08T13:56:00Z"
    assert parse_time("2023-05-08", end_of_day=True) == "2023-05-08T23:59:59Z"
    with pytest.raises(InvalidInput, match="not an ISO 8601 time"):
        parse_time("last tuesday", "as_of")


@pytest.fixture
def replay(tmp_path: Path) -> Iterator[Tideline]:
    settings = Settings.load(overrides={"home": str(tmp_path / "home"), "embedder": "none"})
    app = Tideline(settings, clock=ManualClock(START))
    yield app
    app.close()


def test_an_app_on_a_manual_clock_records_its_times(replay: Tideline) -> None:
    clock = replay.clock
    assert isinstance(clock, ManualClock)
    turn = replay.memory.sync_turn("s1", "user", "I started pottery classes.")
    assert replay.memory.raw.get([turn.id])[0].ts == "2023-05-08T13:56:00Z"
    clock.advance(days=30)
    n = replay.memory.write(gesture="Pottery on Tuesdays", source_links=[turn.id])
    assert n.created_at == n.updated_at == "2023-06-07T13:56:00Z"
    cs = replay.profile.read().changeset()
    ref = cs.add_fact(FactDraft("user", "hobby", "pottery"), turn_ids=(turn.id,))
    fid = replay.profile.apply(cs).ids[ref]
    clock.advance(days=1)
    closed = replay.profile.close(fid, why="stopped")
    assert closed.created_at == "2023-06-07T13:56:00Z"
    assert closed.valid_to == closed.updated_at == "2023-06-08T13:56:00Z"
    run = replay.sleep.run()  # no LLM: the rule steps still run and are recorded
    record = replay.profile.runs(1)[0]
    assert record.id == run.run_id and record.started_at == "2023-06-08T13:56:00Z"
    dreamt = replay.dream.run(layers=["scripts"])
    assert dreamt.day == "2023-06-08"  # "today" is the clock's day
    assert replay.dream.runs(1)[0].started_at == "2023-06-08T13:56:00Z"
    out = io.StringIO()
    replay.export(out)
    assert json.loads(out.getvalue().splitlines()[0])["exported_at"] == "2023-06-08T13:56:00Z"


def test_every_time_column_holds_the_one_stored_form(replay: Tideline) -> None:
    """Whoever owns a table, a time in it is `YYYY-MM-DDTHH:MM:SSZ` (it sorts as it reads)."""
    t = replay.memory.sync_turn("s1", "user", "We moved to Osaka.").id
    replay.memory.write(gesture="The move", source_links=[t])
    cs = replay.profile.read().changeset()
    ref = cs.add_fact(FactDraft("user", "city", "Osaka"), turn_ids=(t,))
    fid = replay.profile.apply(cs).ids[ref]
    replay.profile.reject(fid, "it was Kyoto")
    replay.sleep.run()
    run_all(replay.memory)
    replay.dream.run(layers=["scripts"])
    db = replay.db
    checked = 0
    for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        columns = [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]
        for column in columns:
            if not (column.endswith("_at") or column in ("ts", "valid_from", "valid_to")):
                continue
            for (value,) in db.execute(f'SELECT "{column}" FROM "{table}"'):
                if value is not None:
                    assert STORED.match(str(value)), (table, column, value)
                    checked += 1
    assert checked > 20
