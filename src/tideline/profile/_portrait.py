"""Owner of `user_model`, `trajectory` and `snapshots`: what Sleep's output steps (10, 11, 13) write.

All three are append-only. The current user model is the rows with `superseded_at IS NULL` (one
per dimension); the current trajectory and snapshot are the newest rows. Two clocks: `made_at`
and `superseded_at` are record time; `valid_at` (migration 3) is the conversation's present a
reading, trajectory or snapshot was made at, in valid time.
"""

from __future__ import annotations

import json
from typing import Any

from tideline.profile._changeset import TrajectoryFields
from tideline.profile._records import Snapshot, Trajectory, UserModelEntry
from tideline.store import Storage


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


class PortraitStore:
    def __init__(self, db: Storage):
        self.db = db

    @staticmethod
    def create_tables(db: Storage) -> None:
        db.execute(
            """CREATE TABLE user_model(
                id INTEGER PRIMARY KEY,
                dimension TEXT NOT NULL,
                value TEXT NOT NULL,
                evidence TEXT NOT NULL DEFAULT '[]',
                run_id INTEGER,
                made_at TEXT NOT NULL,
                superseded_at TEXT)"""
        )
        db.execute(
            "CREATE UNIQUE INDEX user_model_current ON user_model(dimension)"
            " WHERE superseded_at IS NULL"
        )
        db.execute(
            """CREATE TABLE trajectory(
                id INTEGER PRIMARY KEY,
                phase TEXT NOT NULL DEFAULT '',
                direction TEXT NOT NULL DEFAULT '',
                stability TEXT NOT NULL DEFAULT '',
                anchors TEXT NOT NULL DEFAULT '[]',
                unstable_areas TEXT NOT NULL DEFAULT '[]',
                momentum TEXT NOT NULL DEFAULT '',
                sessions_since INTEGER NOT NULL DEFAULT 0,
                run_id INTEGER,
                made_at TEXT NOT NULL)"""
        )
        db.execute(
            """CREATE TABLE snapshots(
                id INTEGER PRIMARY KEY,
                text TEXT NOT NULL,
                data TEXT NOT NULL DEFAULT '{}',
                run_id INTEGER,
                made_at TEXT NOT NULL)"""
        )

    @staticmethod
    def add_two_clocks(db: Storage) -> None:
        """Migration 3: the valid time of each reading (the old rows: when they were made)."""
        for table in ("user_model", "trajectory", "snapshots"):
            db.execute(f"ALTER TABLE {table} ADD COLUMN valid_at TEXT")
            db.execute(f"UPDATE {table} SET valid_at = made_at")

    # -- user model --------------------------------------------------------------------------
    def set_dimension(
        self, dimension: str, value: str, evidence: list[int], *, valid_at: str, now: str,
        run_id: int | None,
    ) -> None:  # fmt: skip
        """A new reading of one dimension; the previous one is kept, marked superseded."""
        self.db.execute(
            "UPDATE user_model SET superseded_at = ? WHERE dimension = ? AND superseded_at IS NULL",
            (now, dimension),
        )
        self.db.execute(
            "INSERT INTO user_model(dimension, value, evidence, run_id, made_at, valid_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (dimension, value, _dumps(evidence), run_id, now, valid_at),
        )

    def has_reading(self, dimension: str, made_at: str) -> bool:
        """Whether this reading (a dimension made at that record time) is here already."""
        return bool(
            self.db.one(
                "SELECT id FROM user_model WHERE dimension = ? AND made_at = ?",
                (dimension, made_at),
            )
        )

    def has_trajectory(self, made_at: str) -> bool:
        return bool(self.db.one("SELECT id FROM trajectory WHERE made_at = ?", (made_at,)))

    def user_model(self) -> list[UserModelEntry]:
        rows = self.db.rows(
            "SELECT dimension, value, evidence, made_at, valid_at FROM user_model"
            " WHERE superseded_at IS NULL ORDER BY dimension"
        )
        return [UserModelEntry(**{**r, "evidence": json.loads(r["evidence"])}) for r in rows]

    def user_model_at(self, at: str) -> list[UserModelEntry]:
        """Each dimension's latest reading made by `at` in valid time (as of that date)."""
        rows = self.db.rows(
            "SELECT dimension, value, evidence, made_at, valid_at FROM user_model"
            " WHERE valid_at <= ? ORDER BY dimension, valid_at, id",
            (at,),
        )
        latest = {r["dimension"]: r for r in rows}
        return [
            UserModelEntry(**{**r, "evidence": json.loads(r["evidence"])})
            for _, r in sorted(latest.items())
        ]

    # -- trajectory --------------------------------------------------------------------------
    def add_trajectory(
        self, fields: TrajectoryFields, *, valid_at: str, now: str, run_id: int | None
    ) -> int:
        return int(
            self.db.scalar(
                """INSERT INTO trajectory(phase, direction, stability, anchors, unstable_areas,
                    momentum, sessions_since, run_id, made_at, valid_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id""",
                (
                    fields.get("phase", ""),
                    fields.get("direction", ""),
                    fields.get("stability", ""),
                    _dumps(fields.get("anchors", [])),
                    _dumps(fields.get("unstable_areas", [])),
                    fields.get("momentum", ""),
                    int(fields.get("sessions_since", 0)),
                    run_id,
                    now,
                    valid_at,
                ),
            )
        )

    def trajectory(self, at: str | None = None) -> Trajectory | None:
        """The latest trajectory; with `at`, the latest made by then in valid time."""
        sql = (
            "SELECT id, phase, direction, stability, anchors, unstable_areas, momentum, made_at,"
            " sessions_since, valid_at FROM trajectory"
        )
        if at is None:
            row = self.db.one(f"{sql} ORDER BY id DESC LIMIT 1")
        else:
            row = self.db.one(
                f"{sql} WHERE valid_at <= ? ORDER BY valid_at DESC, id DESC LIMIT 1", (at,)
            )
        if row is None:
            return None
        row["anchors"] = json.loads(row["anchors"])
        row["unstable_areas"] = json.loads(row["unstable_areas"])
        return Trajectory(**row)

    # -- snapshots ---------------------------------------------------------------------------
    def add_snapshot(
        self, text: str, data: dict[str, Any], *, valid_at: str, now: str, run_id: int | None
    ) -> int:
        return int(
            self.db.scalar(
                "INSERT INTO snapshots(text, data, run_id, made_at, valid_at)"
                " VALUES (?, ?, ?, ?, ?) RETURNING id",
                (text, _dumps(data), run_id, now, valid_at),
            )
        )

    def snapshot(self) -> Snapshot | None:
        row = self.db.one(
            "SELECT id, text, data, made_at, run_id, valid_at FROM snapshots"
            " ORDER BY id DESC LIMIT 1"
        )
        if row is None:
            return None
        row["data"] = json.loads(row["data"])
        return Snapshot(**row)

    def count(self) -> dict[str, int]:
        return {
            t: int(self.db.scalar(f"SELECT COUNT(*) FROM {t}"))
            for t in ("user_model", "trajectory", "snapshots")
        }
