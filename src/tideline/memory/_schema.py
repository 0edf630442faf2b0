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


@AGENT_MIGRATIONS.step(2)
def _script_layer(db: Database) -> None:
    """Tables the deterministic script layer rebuilds (topics, soft clusters) or appends to
    (attention). Rebuilds replace their rows in one transaction, so a killed run leaves the
    previous result in place."""
    db.execute(
        """CREATE TABLE topic_clusters(
            id INTEGER PRIMARY KEY,
            keyword TEXT NOT NULL UNIQUE,
            label TEXT NOT NULL,
            size INTEGER NOT NULL,
            keywords TEXT NOT NULL DEFAULT '[]',
            built_at TEXT NOT NULL)"""
    )
    db.execute(
        """CREATE TABLE topic_members(
            topic_id INTEGER NOT NULL REFERENCES topic_clusters(id) ON DELETE CASCADE,
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            PRIMARY KEY (topic_id, narrative_id)) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX topic_members_narrative ON topic_members(narrative_id)")
    db.execute(
        """CREATE TABLE emb_clusters(
            id INTEGER PRIMARY KEY,
            size INTEGER NOT NULL,
            soft_size INTEGER NOT NULL DEFAULT 0,
            centroid BLOB NOT NULL,
            model_id TEXT NOT NULL,
            label TEXT NOT NULL DEFAULT '',
            built_at TEXT NOT NULL)"""
    )
    db.execute(
        """CREATE TABLE emb_cluster_members(
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            cluster_id INTEGER NOT NULL REFERENCES emb_clusters(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL,
            similarity REAL NOT NULL,
            PRIMARY KEY (narrative_id, cluster_id)) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX emb_cluster_members_cluster ON emb_cluster_members(cluster_id)")
    db.execute(
        """CREATE TABLE emb_cluster_adjacency(
            a INTEGER NOT NULL REFERENCES emb_clusters(id) ON DELETE CASCADE,
            b INTEGER NOT NULL REFERENCES emb_clusters(id) ON DELETE CASCADE,
            shared INTEGER NOT NULL,
            PRIMARY KEY (a, b)) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE attention_log(
            id INTEGER PRIMARY KEY,
            narrative_id INTEGER NOT NULL REFERENCES narratives(id) ON DELETE CASCADE,
            cluster_id INTEGER,
            similarity REAL NOT NULL,
            query TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL DEFAULT 'prefetch',
            at TEXT NOT NULL)"""
    )
    db.execute("CREATE INDEX attention_log_at ON attention_log(at)")
    db.execute(
        """CREATE TABLE entity_roles(
            entity TEXT NOT NULL,
            role TEXT NOT NULL,
            memories INTEGER NOT NULL,
            stable INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (entity, role)) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE entity_pairs(
            a TEXT NOT NULL,
            b TEXT NOT NULL,
            memories INTEGER NOT NULL,
            role_pairs TEXT NOT NULL DEFAULT '{}',
            PRIMARY KEY (a, b)) WITHOUT ROWID"""
    )
    db.execute(
        """CREATE TABLE runs(
            id INTEGER PRIMARY KEY,
            pipeline TEXT NOT NULL,
            step TEXT NOT NULL,
            status TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '{}',
            started_at TEXT NOT NULL,
            finished_at TEXT)"""
    )
