"""The vector file beside memory.db (issue 25): approximate candidates, exact answers.

A real SQLite file and real vector files on disk; vectors in clusters (like real embeddings).
Every check compares with numpy's exact answer over the vectors the database holds *now*: after
writes the file has not seen (this process's and another's), deletions, a new model, a damaged
or foreign generation, and a builder killed half way.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.file_damage import run_script
from tests.helpers import kill_building
from tideline.app import memory_policies
from tideline.clock import system_clock
from tideline.config import DEFAULTS
from tideline.embed import Embedder
from tideline.memory import AGENT_MIGRATIONS, Memory
from tideline.search import TextIndex, VectorOptions
from tideline.search._sqlite_vectors import SCANS_BEFORE_COPY
from tideline.store import Database, open_database

DIM = 32
N = 4000
ON = VectorOptions(file_min=0)


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def _clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    centres = _unit(rng.standard_normal((40, DIM)))
    return _unit(centres[rng.integers(0, 40, n)] + 0.35 * _unit(rng.standard_normal((n, DIM))))


def _open(path: Path, options: VectorOptions = ON) -> TextIndex:
    db = Database(path)
    db.execute("CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY, grp INTEGER NOT NULL)")
    index = TextIndex(db, "t")
    index.configure(options)
    return index


def _fill(index: TextIndex, vectors: np.ndarray, first: int = 1) -> list[int]:
    index.bind_vectors("clusters", DIM)
    ids = list(range(first, first + len(vectors)))
    with index.db.transaction():
        index.db.executemany(
            "INSERT OR REPLACE INTO items(id, grp) VALUES (?, ?)", [(i, i % 10) for i in ids]
        )
        index.set_vectors(zip(ids, vectors, strict=True))
    return ids


def _exact(vectors: dict[int, np.ndarray], q: np.ndarray, k: int = 10) -> list[int]:
    ids = sorted(vectors)
    sims = np.array([float(vectors[i] @ q) for i in ids])
    return [ids[j] for j in np.argsort(-sims, kind="stable")[:k]]


def _ids(index: TextIndex, q: np.ndarray, k: int = 10, **kw: object) -> list[int]:
    return [h.id for h in index.vector(q, k, **kw)]  # type: ignore[arg-type]


@pytest.fixture
def built(tmp_path: Path) -> tuple[TextIndex, dict[int, np.ndarray]]:
    rng = np.random.default_rng(25)
    index = _open(tmp_path / "memory.db")
    vectors = _clustered(rng, N)
    ids = _fill(index, vectors)
    assert index.vector_file().build()
    return index, dict(zip(ids, vectors, strict=True))


def test_the_file_answers_like_exact_search_without_loading_the_vectors(
    built: tuple[TextIndex, dict[int, np.ndarray]],
) -> None:
    index, vectors = built
    rng = np.random.default_rng(1)
    recall = []
    for q in _clustered(rng, 30):
        got = _ids(index, q)
        recall.append(len(set(got) & set(_exact(vectors, q))) / 10)
        hits = index.vector(q, 10)
        # the distances are exact (re-scored from float32), in order
        for h in hits:
            assert h.vec_distance == pytest.approx(1 - float(vectors[h.id] @ q), abs=1e-5)
        assert [h.vec_distance for h in hits] == sorted(h.vec_distance or 0 for h in hits)
    assert np.mean(recall) >= 0.95
    assert index._matrix is None  # the in-process copy of every vector was never made
    maps = Path("/proc/self/maps").read_text()
    folder = index.vector_file().stats()["folder"]  # type: ignore[union-attr]
    assert f"{folder}/graph.usearch" in maps  # the graph is mapped, not loaded
    assert f"{folder}/vectors.f32" not in maps  # the float32 rows are read, never mapped
    some = list(vectors)[:50]
    got = index.distances(q, some)
    assert got == pytest.approx({i: 1 - float(vectors[i] @ q) for i in some}, abs=1e-5)


def test_writes_after_the_build_are_found_and_deleted_records_never(
    built: tuple[TextIndex, dict[int, np.ndarray]],
) -> None:
    index, vectors = built
    rng = np.random.default_rng(2)
    q = _clustered(rng, 1)[0]
    before = _exact(vectors, q)
    # new records right on the query, a changed one, and the old nearest deleted
    near = _unit(q + 0.01 * rng.standard_normal((3, DIM)))
    new = _fill(index, near, first=N + 1)
    vectors.update(zip(new, near, strict=True))
    index.set_vectors([(before[1], _unit(-q))])
    vectors[before[1]] = _unit(-q)
    index.delete([before[0]])
    del vectors[before[0]]
    got = _ids(index, q)
    assert got[:3] == _exact(vectors, q)[:3] and set(new) == set(got[:3])
    assert before[0] not in got and before[1] not in got
    assert index.vector_file().stats()["delta"] == 5  # type: ignore[union-attr]
    # a rebuild takes the changes in; the answer stays the same
    assert index.vector_file().build()
    assert index.vector_file().stats()["delta"] == 0  # type: ignore[union-attr]
    assert _ids(index, q)[:3] == got[:3]


def test_another_process_writes_and_this_one_sees_it(
    built: tuple[TextIndex, dict[int, np.ndarray]], tmp_path: Path
) -> None:
    index, vectors = built
    q = _clustered(np.random.default_rng(3), 1)[0]
    assert _ids(index, q) == _exact(vectors, q)  # the file is open and read
    other = _open(tmp_path / "memory.db")
    planted = _unit(q + 0.001 * np.random.default_rng(4).standard_normal(DIM))
    _fill(other, planted[None, :], first=10 * N)
    other.db.close()
    assert _ids(index, q)[0] == 10 * N


def test_a_new_model_makes_the_file_unusable_until_rebuilt(
    built: tuple[TextIndex, dict[int, np.ndarray]],
) -> None:
    index, _ = built
    rng = np.random.default_rng(5)
    assert index.bind_vectors("another-model", DIM)  # every old vector dropped
    fresh = _clustered(rng, 200)
    ids = list(range(1, 201))
    index.set_vectors(zip(ids, fresh, strict=True))
    q = fresh[7]
    assert index.vector_file().stats() == {"ready": False}  # type: ignore[union-attr]
    assert _ids(index, q) == _exact(dict(zip(ids, fresh, strict=True)), q)
    assert index.vector_file().build()
    assert index.vector_file().stats()["rows"] == 200  # type: ignore[union-attr]
    assert _ids(index, q)[0] == 8


def test_filtered_searches_are_exact(built: tuple[TextIndex, dict[int, np.ndarray]]) -> None:
    index, vectors = built
    rng = np.random.default_rng(6)
    where = "rowid IN (SELECT id FROM items WHERE grp = ?)"
    for q in _clustered(rng, 5):
        inside = {i: v for i, v in vectors.items() if i % 10 == 3}
        assert _ids(index, q, where=where, params=(3,)) == _exact(inside, q)
        window = {i: v for i, v in vectors.items() if 1000 <= i <= 1080}
        got = _ids(index, q, where="rowid BETWEEN ? AND ?", params=(1000, 1080))
        assert got == _exact(window, q)


def test_a_damaged_or_foreign_generation_is_never_read(
    built: tuple[TextIndex, dict[int, np.ndarray]], tmp_path: Path
) -> None:
    index, vectors = built
    folder = tmp_path / "memory.db.vectors" / index.vector_file().stats()["folder"]  # type: ignore[union-attr]
    q = _clustered(np.random.default_rng(7), 1)[0]
    # a copy of the database elsewhere, with the vector files beside it: another file
    index.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(tmp_path / "memory.db", tmp_path / "copy.db")
    shutil.copytree(tmp_path / "memory.db.vectors", tmp_path / "copy.db.vectors")
    copy = _open(tmp_path / "copy.db")
    assert copy.vector_file().stats() == {"ready": False}  # type: ignore[union-attr]
    assert _ids(copy, q) == _exact(vectors, q)
    copy.db.close()
    # damage: the float32 rows cut short, while this process has the file open
    assert _ids(index, q) == _exact(vectors, q)
    with (folder / "vectors.f32").open("r+b") as f:
        f.truncate(100)
    assert _ids(index, q) == _exact(vectors, q)
    assert index.vector_file().stats() == {"ready": False}  # type: ignore[union-attr]
    fresh = _open(tmp_path / "memory.db")
    assert fresh.vector_file().stats() == {"ready": False}  # type: ignore[union-attr]
    assert _ids(fresh, q) == _exact(vectors, q)


_BUILDER = """
import sys
from tideline.search import TextIndex, VectorOptions
from tideline.store import Database
index = TextIndex(Database(sys.argv[1]), "t")
index.configure(VectorOptions(file_min=0))
index.vector_file().build()
"""


def test_a_builder_killed_half_way_leaves_answers_right(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    index = _open(tmp_path / "memory.db")
    vectors = _clustered(rng, 15_000)  # HNSW over these takes ~1 s: the kill lands half way
    ids = _fill(index, vectors)
    exact = dict(zip(ids, vectors, strict=True))
    root = tmp_path / "memory.db.vectors"
    kill_building(_BUILDER, tmp_path / "memory.db", root)
    q = vectors[123]
    assert index.vector_file().stats() == {"ready": False}  # type: ignore[union-attr]
    assert _ids(index, q) == _exact(exact, q)  # exact meanwhile
    assert index.vector_file().build()  # the lock died with the builder; its leftovers go
    assert not [p for p in root.iterdir() if p.name.endswith(".tmp")]
    assert _ids(index, q)[0] == 124


def test_memory_builds_its_vector_files_when_it_embeds(tmp_path: Path, e5: Embedder) -> None:
    db = open_database(tmp_path / "memory.db", AGENT_MIGRATIONS)
    memory = Memory(
        db, e5, **memory_policies(DEFAULTS), vectors=VectorOptions(file_min=20), clock=system_clock
    )
    words = ["kayak", "violin", "garden", "python", "paris", "marathon"]
    for n, w in enumerate(words * 5):
        memory.sync_turn("s1", "user", f"turn {n}: I spent the day on my {w}")
    memory.embed_pending()
    file = memory.raw.index.large_vector_file()
    assert file is not None and file.stats()["rows"] == 30 and file.stats()["delta"] == 0
    # The vector stage alone: the neighbours lever lifts a turn whose neighbours are near the
    # query, and every kayak turn here sits next to a violin one.
    alone = replace(memory.turn_policy, neighbour_weight=0.0)
    hits = memory.search_turns("playing the violin", 5, mode="vec", policy=alone)
    assert all("violin" in h.text for h in hits[:5])
    exact = Memory(
        db,
        e5,
        **memory_policies(DEFAULTS),
        vectors=VectorOptions(file_min=10**9),
        clock=system_clock,
    )
    assert [
        h.id for h in exact.search_turns("playing the violin", 5, mode="vec", policy=alone)
    ] == [h.id for h in hits]
    lifted = memory.search_turns("playing the violin", 5, mode="vec")
    assert [h.id for h in exact.search_turns("playing the violin", 5, mode="vec")] == [
        h.id for h in lifted
    ]


def test_a_small_index_scans_until_its_copy_pays(tmp_path: Path) -> None:
    """Below `file_min` a process answers its first searches with sqlite-vec's scan (a CLI call
    never reads every vector into a copy) and loads the copy after `SCANS_BEFORE_COPY`; both
    answers are the exact ones."""
    rng = np.random.default_rng(7)
    index = _open(tmp_path / "memory.db", VectorOptions(file_min=10**9))
    vectors = _clustered(rng, 600)
    stored = dict(zip(_fill(index, vectors), vectors, strict=True))
    for n, q in enumerate(_clustered(rng, SCANS_BEFORE_COPY + 2)):
        hits = index.vector(q, 10)
        assert {h.id for h in hits} == set(_exact(stored, q)), n
        for h in hits:
            assert h.vec_distance == pytest.approx(1 - float(stored[h.id] @ q), abs=1e-5)
        assert (index._matrix is None) == (n < SCANS_BEFORE_COPY), n
    some = list(stored)[:20]
    assert index.distances(q, some) == pytest.approx(
        {i: 1 - float(stored[i] @ q) for i in some}, abs=1e-5
    )


def test_the_walk_widens_with_the_file() -> None:
    """The default walk: twice the candidates, at least 320, and one step per 1,500 rows (a 1M
    file walked 320 recalled 0.946 of the exact top 10 on real vectors, 640: 0.976); the
    setting's walk is the setting's; PostgreSQL (rows unknown) keeps the floor."""
    assert ON.ef(40, 200_000) == 320
    assert ON.ef(40, 1_000_000) == 666
    assert ON.ef(400, 1_000_000) == 800
    assert ON.ef(40) == 320
    assert VectorOptions(file_min=0, ef_search=100).ef(40, 1_000_000) == 100


def test_rows_in_any_order_with_repeats_and_runs_are_the_stored_rows(tmp_path: Path) -> None:
    """A graph's candidates are scattered rows, a window's adjacent ones, the exact re-score's
    repeats: every shape reads back the rows written, in the order asked."""
    from tideline.search._vector_file import Meta, VectorFile, write_generation

    rng = np.random.default_rng(3)
    matrix = _unit(rng.standard_normal((500, DIM)))
    meta = Meta("m", DIM, [0, 0], 1, 500, 500)
    write_generation(tmp_path, "t", meta, np.arange(1, 501, dtype=np.int64), matrix)
    file = VectorFile.open_current(tmp_path, "t")
    assert file is not None
    for rows in (
        rng.permutation(500)[:97],  # scattered, unsorted
        np.array([7, 3, 7, 499, 0, 3]),  # repeats, both ends
        np.r_[np.arange(100, 160), np.arange(10, 12), [300]],  # runs out of order
        np.arange(200, 260),  # one run in order
        np.array([42]),
        np.zeros(0, dtype=np.int64),
    ):
        got = file.rows(rows)
        assert got.shape == (len(rows), DIM)
        assert np.array_equal(got, matrix[rows])
    with (file.folder / "vectors.f32").open("r+b") as f:
        f.truncate(DIM * 4 * 400)
    with pytest.raises(OSError):
        file.rows(np.array([5, 450]))
    file.close()


_DAMAGE = """
import logging, sys
from pathlib import Path
import numpy as np
from tests.file_damage import KINDS, vector_files
from tideline.search import TextIndex, VectorOptions
from tideline.store import Database

warnings = []
logging.getLogger("tideline").addHandler(
    type("H", (logging.Handler,), {"emit": lambda self, r: warnings.append(r.getMessage())})()
)
path = Path(sys.argv[1])

def opened():
    index = TextIndex(Database(path), "t")
    index.configure(VectorOptions(file_min=0))
    return index

rng = np.random.default_rng(31)
vectors = rng.standard_normal((300, 32)).astype(np.float32)
vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
server = opened()  # a long-running process: it has the generation open when the damage comes
server.bind_vectors("clusters", 32)
server.set_vectors(zip(range(1, 301), vectors))
queries = rng.standard_normal((3, 32)).astype(np.float32)
exact = [[int(i) + 1 for i in np.argsort(-(vectors @ q), kind="stable")[:10]] for q in queries]
for name in ("graph.usearch", "vectors.f32", "ids.npy", "meta.json"):
    for kind in KINDS:
        for seed in (5, 7, 9) if name == "graph.usearch" else (5,):  # 5, 7, 9 crashed usearch
            assert server.vector_file().build()
            assert [h.id for h in server.vector(queries[0], 10)] == exact[0]
            target = [p for p in vector_files(path) if p.name == name][0]
            KINDS[kind](target, seed)
            warnings.clear()
            for index in (server, opened()):
                got = [[h.id for h in index.vector(q, 10)] for q in queries]
                assert got == exact, (name, kind, seed)
                assert index.vector_file().stats() == {"ready": False}, (name, kind, seed)
            assert len(warnings) == 1 and name in warnings[0], (name, kind, seed, warnings)
            print(name, kind, seed, "ok", flush=True)
"""


def test_a_damaged_file_is_never_read_and_said_once(tmp_path: Path) -> None:
    """Random, zeroed, shuffled or cut bytes in any file of a generation (30 % random bytes in
    `graph.usearch` crashed usearch with SIGSEGV, issue 31; the rest gave wrong answers): every
    search, in the process that had it open and in a new one, answers exactly; one warning names
    the file; the generation is gone, so the next build makes it again. In a subprocess: a crash
    is a failed test, not a dead test run."""
    out = run_script(_DAMAGE, tmp_path / "memory.db")
    assert out.count(" ok") == 4 * 3 + 3 * 4


def _mapped_kb(path: Path) -> int:
    """This process's resident kB of its mappings of `path` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if "-" in line.split(" ", 1)[0]:
            inside = line.rstrip().endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def test_walks_let_go_of_the_graphs_pages_and_answer_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: the graph is mapped, and every page a walk touched stayed in the server's RSS
    (~530 MB of a 1M-turn file after 300 searches). Past `GRAPH_RESIDENT_GROWTH` of new
    file-backed pages the graph lets go of its pages; they are clean, so the walks after it
    read them again and find the same rows."""
    from tideline.search import _vector_file
    from tideline.search._vector_file import Meta, VectorFile, write_generation

    rng = np.random.default_rng(34)
    n, dim = 8_000, 96
    matrix = _unit(rng.standard_normal((n, dim)))
    meta = Meta("m", dim, [0, 0], 1, n, n)
    write_generation(tmp_path, "t", meta, np.arange(1, n + 1, dtype=np.int64), matrix)
    file = VectorFile.open_current(tmp_path, "t")
    assert file is not None
    graph = (file.folder / "graph.usearch").resolve()
    queries = _unit(rng.standard_normal((20, dim)))
    monkeypatch.setattr(_vector_file, "GRAPH_RESIDENT_GROWTH", 1 << 40)  # kept, as before
    kept = [file.candidates(q, 40, 400).tolist() for q in queries]
    held = _mapped_kb(graph)
    assert held > 1024  # the walks' pages stay mapped
    monkeypatch.setattr(_vector_file, "GRAPH_RESIDENT_GROWTH", 0)  # let go after each walk
    again = [file.candidates(q, 40, 400).tolist() for q in queries]
    assert again == kept
    assert _mapped_kb(graph) < held / 4
    file.close()
