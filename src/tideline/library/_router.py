"""Routing: which collections should a question be searched in?

The cost is not the search but the choice of where to search, so the strategy grows with the
library (thresholds are parameters):
- up to `flat_max` (~50) collections, `flat`: every `name — description`, best matches first
  (BM25 + vectors over the descriptions; `Library.route` adds what the notes themselves say);
  small enough to put whole into a prompt or a tool answer;
- up to `tree_max` (~5,000), `tree`: an optional name prefix (`work/`, `work/jira/*`) filters the
  name tree, then BM25 over names, descriptions and tags ranks what is left; the answer also lists
  the prefix's children with their sizes so an agent can walk down the tree;
- beyond, `router`: BM25 + vectors over the descriptions, fused by RRF, give candidates.

The routing index lives in `<root>/.memo/router.db` and is synced from `_registry.yaml` by content
hash, so only changed descriptions are re-indexed (and re-embedded). Like every index, it can be
deleted at any time.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tideline.embed import Embedder
from tideline.library._index_dir import claim_index_dir
from tideline.library._paths import INDEX_DIR
from tideline.library._registry import RegistryEntry, load_registry
from tideline.search import Mode, Policy, Scope, TextIndex, query_vector, retrieve
from tideline.store import Database, Migrations, open_database

FLAT_MAX = 50
TREE_MAX = 5000
EMBED_BATCH = 256  # descriptions are short

_migrations = Migrations("library_router")


@_migrations.step(1)
def _create(db: Database) -> None:
    db.execute(
        "CREATE TABLE routes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, path TEXT NOT NULL,"
        " description TEXT NOT NULL, hash TEXT NOT NULL, embedded TEXT)"
    )
    TextIndex.create_tables(db, "routes")


@dataclass(frozen=True)
class Candidate:
    name: str
    path: str
    description: str
    score: float = 0.0

    def line(self) -> str:
        return f"{self.name} — {self.description}"


@dataclass
class RouteResult:
    strategy: str  # flat | tree | router
    total: int
    candidates: list[Candidate]
    prefix: str = ""
    tree: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "total": self.total,
            "prefix": self.prefix,
            "tree": self.tree,
            "candidates": [c.__dict__ for c in self.candidates],
            "warnings": self.warnings,
        }


def _route_text(e: RegistryEntry) -> str:
    name_words = e.name.replace("/", " ").replace("-", " ").replace("_", " ")
    return f"{name_words}\n{e.description}\n{' '.join(e.tags)}"


def _hash(e: RegistryEntry) -> str:
    return hashlib.sha1(f"{e.path}\0{_route_text(e)}".encode()).hexdigest()


def _prefix_from_query(query: str, names: list[str]) -> tuple[str, str]:
    """A word like `work/` or `work/jira/*` in the query is a name prefix; return (prefix, rest)."""
    words = query.split()
    for w in words:
        if "/" not in w:
            continue
        p = w.rstrip("*").strip("/")
        if p and any(n == p or n.startswith(p + "/") for n in names):
            rest = " ".join(x for x in words if x != w)
            return p, rest
    return "", query


class Router:
    """Ranks the collections of one library for a question."""

    def __init__(
        self,
        root: Path,
        embedder: Embedder | None = None,
        *,
        flat_max: int = FLAT_MAX,
        tree_max: int = TREE_MAX,
        entries: dict[str, RegistryEntry] | None = None,
        centre: bool = True,
    ):
        self.root = root
        self.centre = centre  # query centring, as the library's policy says (`search/_centre`)
        self.embedder = embedder if embedder is not None and embedder.dim > 0 else None
        self.flat_max = flat_max
        self.tree_max = tree_max
        self.entries = entries if entries is not None else load_registry(root)
        self._db: Database | None = None
        self._index: TextIndex | None = None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db, self._index = None, None

    def strategy(self) -> str:
        n = len(self.entries)
        if n <= self.flat_max:
            return "flat"
        return "tree" if n <= self.tree_max else "router"

    def route(self, query: str, k: int = 10, prefix: str = "") -> RouteResult:
        names = sorted(self.entries)
        strategy = self.strategy()
        if not prefix:
            prefix, query = _prefix_from_query(query, names)
        prefix = prefix.rstrip("*").strip("/")
        pool = [n for n in names if not prefix or n == prefix or n.startswith(prefix + "/")]
        # flat: few descriptions, cheap to embed, so a question that shares no word with any of
        # them is still ranked by meaning instead of every collection scoring 0.0
        meaning = strategy in ("flat", "router") and self.embedder is not None
        db, index, warnings = self._sync(vectors=meaning)
        where: str | None = None
        params: tuple[object, ...] = ()
        if prefix:
            where = "rowid IN (SELECT id FROM routes WHERE name = ? OR name LIKE ? ESCAPE '\\')"
            like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
            params = (prefix, like)
        qvec, down = None, None
        if meaning and query.strip():
            qvec, down = query_vector(self.embedder, query)
        mode: Mode = "hybrid" if meaning else "lex"
        depth = max(k * 4, 40) if strategy != "flat" else max(len(pool), 1)
        found = retrieve(
            Scope(index, where, params),
            query,
            qvec,
            depth,
            mode,
            Policy(depth=depth, centre=self.centre, kind="collection"),
            warning=down,
        )
        by_id = {r["id"]: r for r in db.rows("SELECT id, name, path, description FROM routes")}
        ranked: list[Candidate] = []
        seen: set[str] = set()
        for h in found.top(depth):
            r = by_id.get(h.id)
            if r is None or r["name"] in seen:
                continue
            seen.add(r["name"])
            ranked.append(Candidate(r["name"], r["path"], r["description"], round(h.score, 6)))
        if strategy == "flat":  # everything, best first
            for n in pool:
                if n not in seen:
                    e = self.entries[n]
                    ranked.append(Candidate(e.name, e.path, e.description, 0.0))
        else:
            ranked = ranked[:k]
        tree = _children(pool, prefix) if strategy != "flat" else {}
        warnings += found.warnings
        return RouteResult(strategy, len(self.entries), ranked, prefix, tree, warnings)

    # -- the routing index -----------------------------------------------------------------
    def _sync(self, *, vectors: bool) -> tuple[Database, TextIndex, list[str]]:
        if self._db is None or self._index is None:
            claim_index_dir(self.root / INDEX_DIR)
            self._db = open_database(self.root / INDEX_DIR / "router.db", _migrations)
            self._index = TextIndex(self._db, "routes")  # kept: its vector matrix is cached
        db, index = self._db, self._index
        have = {
            r["name"]: (r["id"], r["hash"]) for r in db.rows("SELECT id, name, hash FROM routes")
        }
        changed = [e for n, e in self.entries.items() if have.get(n, (0, ""))[1] != _hash(e)]
        gone = [(i,) for n, (i, _) in have.items() if n not in self.entries]
        if changed or gone:
            with db.transaction():
                if gone:
                    index.delete(i for (i,) in gone)
                    db.executemany("DELETE FROM routes WHERE id = ?", gone)
                rows = []
                for e in changed:
                    db.execute(
                        "INSERT INTO routes(name, path, description, hash) VALUES (?, ?, ?, ?) "
                        "ON CONFLICT(name) DO UPDATE SET path = excluded.path, "
                        "description = excluded.description, hash = excluded.hash, embedded = NULL",
                        (e.name, e.path, e.description, _hash(e)),
                    )
                    rowid = db.scalar("SELECT id FROM routes WHERE name = ?", (e.name,))
                    rows.append((rowid, _route_text(e)))
                index.upsert_many(rows)
        warnings: list[str] = []
        if vectors and self.embedder is not None:
            model_id = self.embedder.model_id
            index.bind_vectors(model_id, self.embedder.dim)
            todo = db.rows(
                "SELECT id, name FROM routes WHERE embedded IS NULL OR embedded != ?", (model_id,)
            )
            fill = index.fill_vectors(
                self.embedder,
                [(r["id"], _route_text(self.entries[r["name"]])) for r in todo],
                batch=EMBED_BATCH,
                on_batch=lambda ids: db.executemany(
                    "UPDATE routes SET embedded = ? WHERE id = ?", [(model_id, i) for i in ids]
                ),
                hint="the next route embeds them once the embedder is back",
            )
            warnings += [fill.warning] if fill.warning else []
        return db, index, warnings


def _children(pool: list[str], prefix: str) -> dict[str, int]:
    """Counts of collections under each next name segment below `prefix`."""
    depth = len(prefix.split("/")) if prefix else 0
    counts: Counter[str] = Counter()
    for n in pool:
        parts = n.split("/")
        if len(parts) > depth:
            counts["/".join(parts[: depth + 1])] += 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:50])
