"""The agent database (`<home>/memory.db`): raw context, narratives and their links.

Design and invariants:
- `sessions` / `turns` are the raw context: every turn kept whole, never summarised or edited.
  `turns.hash` is unique, so sending (or importing) the same turn twice stores it once. Turns are
  ordered inside a session by `seq`.
- `narratives` are structured memories; `weight` is derived from the four 1–5 dimensions
  (`tideline.weights`) and may be deflated by the anti-inflation rule. Tags live both as a JSON
  array (for display) and in `narrative_tags` (normalised, for counting and filtering).
- `narrative_links` are the source links: narrative → the turns it came from.
- Texts are indexed by two `TextIndex`es: `turn_text` and `narrative_text` (FTS5 + vectors).
- Timestamps are UTC ISO-8601 strings `YYYY-MM-DDTHH:MM:SSZ`, so they sort as text.
Later steps (script layer, profile) add their own numbered migrations here.
"""

from __future__ import annotations

from tideline.search import TextIndex
from tideline.store import Database, Migrations

AGENT_MIGRATIONS = Migrations("agent")
TURN_INDEX = "turn_text"
NARRATIVE_INDEX = "narrative_text"
KINDS = ("narrative", "dream", "reflection")


@AGENT_MIGRATIONS.step(1)
def _raw_context_and_narratives(db: Database) -> None:
    db.execute(
        """CREATE TABLE sessions(
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            source TEXT NOT NULL DEFAULT 'sync',
            title TEXT,
            started_at TEXT,
            ended_at TEXT,
            created_at TEXT NOT NULL)"""
    )
    db.execute(
        """CREATE TABLE turns(
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id),
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            speaker TEXT,
            text TEXT NOT NULL,
            ts TEXT NOT NULL,
            hash TEXT NOT NULL UNIQUE,
            external_id TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (session_id, seq))"""
    )
    db.execute("CREATE INDEX turns_ts ON turns(ts)")
    db.execute("CREATE INDEX turns_external ON turns(external_id)")
    db.execute(
        f"""CREATE TABLE narratives(
            id INTEGER PRIMARY KEY,
            gesture TEXT NOT NULL,
            context TEXT NOT NULL DEFAULT '',
            cognition_direction TEXT NOT NULL DEFAULT '',
            importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
            emotional INTEGER NOT NULL CHECK (emotional BETWEEN 1 AND 5),
            recurrence INTEGER NOT NULL CHECK (recurrence BETWEEN 1 AND 5),
            unresolved INTEGER NOT NULL CHECK (unresolved BETWEEN 1 AND 5),
            weight REAL NOT NULL CHECK (weight BETWEEN 0 AND 1),
            kind TEXT NOT NULL CHECK (kind IN {KINDS!r}),
            tags TEXT NOT NULL DEFAULT '[]',
            entities_role TEXT NOT NULL DEFAULT '',
            related_entities TEXT NOT NULL DEFAULT '[]',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL)"""
    )
    db.execute("CREATE INDEX narratives_created ON narratives(created_at)")
    db.execute("CREATE INDEX narratives_weight ON narratives(weight)")
    db.execute(
        """CREATE TABLE narrative_tags(
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (narrative_id, tag)) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX narrative_tags_tag ON narrative_tags(tag)")
    db.execute(
        """CREATE TABLE narrative_links(
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            turn_id INTEGER NOT NULL REFERENCES turns(id),
            PRIMARY KEY (narrative_id, turn_id)) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX narrative_links_turn ON narrative_links(turn_id)")
    TextIndex.create_tables(db, TURN_INDEX)
    TextIndex.create_tables(db, NARRATIVE_INDEX)
