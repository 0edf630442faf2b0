"""The vector file beside an SQLite database: one index's vectors as a process maps them, with an
approximate (HNSW) index over them, instead of a copy every process loads (issue 25).

A folder `<database>.vectors/` beside the file holds, for an index named `N`:
- `N.current`: the name of the generation in use (replaced by a rename, so it is always whole);
- `N.lock`: held (`flock`) by the one process building a generation;
- `N-<position>-<nonce>/`: a generation, never changed once published:
  `meta.json` what it was made of (format, model id, dimension, the database file's identity, the
  position in the index's change log it includes, rows); `ids.npy` the record of each row (rows in
  record order, a record's parts together); `vectors.f32` each row's unit float32 vector, read
  with `pread` for the exact re-scoring, so a search never maps the whole matrix; `graph.usearch`
  usearch's HNSW graph over int8 copies of the rows, searched as a memory-mapped view.
`meta.json` also holds each other file's seal (size, checksum, stat: `_seal`) and a digest of its
own text; a generation is checked against them before anything in it is read or mapped, and a
damaged one is reported once, deleted, and made again (a damaged graph would crash the process).
Everything in it is disposable: it is made again from the vectors in the database whenever it is
missing, damaged, of another model or database, or behind the change log (see `_knn`). A build
writes a folder of its own and publishes it by renaming `N.current` into place; a process killed
half way leaves an unpublished folder that the next build deletes.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tideline.search._seal import (
    Seal,
    check_files,
    moved,
    seal_files,
    sealed_text,
    stat_of,
    unsealed,
    write_atomically,
)

log = logging.getLogger(__name__)

#: What a generation's files look like; another number is rebuilt, never read.
FORMAT = 2
#: The files of a generation besides `meta.json` (the graph only when it has rows).
DATA_FILES = ("ids.npy", "vectors.f32", "graph.usearch")
#: The HNSW graph: links per node, and the walk while building (usearch's own names).
CONNECTIVITY = 16
EXPANSION_ADD = 128
_ROW_BYTES_LIMIT = 1 << 26  # rows read in one `pread` at most (64 MB)
#: The graph's pages a process keeps mapped (issue 34). A walk touches a few thousand of its
#: nodes; over hundreds of searches most of the file (~530 MB at a million turns) stayed in
#: the process's RSS, though it is clean page cache the kernel can read again. Once the
#: process's file-backed pages grew by this much since a graph last let go of its pages, it
#: lets go of them again (`madvise(MADV_DONTNEED)` on its mapping): they stay in the page
#: cache, so the next walks fault them back in from memory, not from the disk.
GRAPH_RESIDENT_GROWTH = 128 << 20
_MADV_DONTNEED = 4
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _file_pages() -> int:
    """Bytes of file-backed memory this process has resident (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[2]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _let_go(path: Path) -> None:
    """Drop this process's resident pages of every mapping of `path` (read-only, shared, so
    nothing is lost: the next read faults them back from the page cache)."""
    import ctypes

    mapped = os.path.realpath(path)  # as /proc names it
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            spans = [line.split(None, 1)[0] for line in f if line.rstrip().endswith(mapped)]
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return
    madvise = libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    for span in spans:
        start, end = (int(x, 16) for x in span.split("-"))
        madvise(start, end - start, _MADV_DONTNEED)


def vector_folder(database: Path) -> Path:
    """Where the vector files of the database at `database` live."""
    return database.with_name(database.name + ".vectors")


def database_identity(database: Path) -> list[int]:
    """The file's device and inode: a database restored or replaced by another file is a new one
    even where its change log reads the same."""
    st = database.stat()
    return [int(st.st_dev), int(st.st_ino)]


@dataclass(frozen=True)
class Meta:
    """What a generation was made of (`meta.json`)."""

    model_id: str
    dim: int
    database: list[int]
    position: int
    rows: int
    records: int
    format: int = FORMAT

    def fits(self, model_id: str | None, dim: int, database: list[int]) -> bool:
        return (self.format, self.model_id, self.dim, self.database) == (
            FORMAT,
            model_id,
            dim,
            database,
        )


class VectorFile:
    """One published generation, open for searching (see the module docstring)."""

    def __init__(
        self,
        folder: Path,
        meta: Meta,
        ids: np.ndarray,
        graph: Any,
        fd: int,
        seals: dict[str, Seal],
        meta_stat: list[int],
    ):
        self.folder = folder
        self.meta = meta
        #: The record of each row, ascending (a record's parts are consecutive rows).
        self.ids = ids
        self._graph = graph
        self._fd = fd
        self._seals = seals
        self._meta_stat = meta_stat  # `meta.json` as opened: rewritten, it is checked again
        self._resident_from = _file_pages()  # `GRAPH_RESIDENT_GROWTH` counts from here

    # -- opening -------------------------------------------------------------------------------
    @staticmethod
    def current(root: Path, name: str) -> str | None:
        """The folder name `N.current` holds, if it is one a build writes."""
        try:
            current = (root / f"{name}.current").read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if not current.startswith(f"{name}-") or "/" in current or len(current) > 200:
            return None
        return current

    @classmethod
    def open_current(cls, root: Path, name: str) -> VectorFile | None:
        """The generation `N.current` names, checked whole; None when there is none or it is
        damaged (a damaged one is never read: it is reported once and deleted, and the caller
        searches exactly and rebuilds)."""
        current = cls.current(root, name)
        if current is None or not (root / current).is_dir():
            return None
        meta, seals, problem = check(root / current)
        if problem is not None:
            discard(root / current, problem)
        return None if meta is None else cls.open(root / current, meta, seals)

    @classmethod
    def open(cls, folder: Path, meta: Meta, seals: dict[str, Seal]) -> VectorFile | None:
        """The generation in `folder`, which `check` found whole as `meta` and `seals`."""
        try:
            ids = np.load(folder / "ids.npy", mmap_mode="r", allow_pickle=False)
            if ids.dtype != np.int64 or ids.shape != (meta.rows,):
                return None
            graph = None
            if meta.rows:
                from usearch.index import Index

                graph = Index.restore(str(folder / "graph.usearch"), view=True)
                if graph is None or graph.size != meta.rows or graph.ndim != meta.dim:
                    return None
            meta_stat = stat_of(folder / "meta.json")
            fd = os.open(folder / "vectors.f32", os.O_RDONLY)
            return cls(folder, meta, ids, graph, fd, seals, meta_stat)
        except (OSError, ValueError, TypeError, RuntimeError):
            return None

    def changed(self) -> bool:
        """A file of this generation was written to since it was opened (one `stat` each): it
        is checked again before the next read, the graph before usearch follows its links."""
        try:
            meta = stat_of(self.folder / "meta.json")
        except OSError:
            return True
        return meta != self._meta_stat or moved(self.folder, self._seals)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._graph = None

    # -- reading -------------------------------------------------------------------------------
    def candidates(self, q: np.ndarray, n: int, ef: int) -> np.ndarray:
        """Up to `n` rows nearest to `q` by the graph (int8: approximate), walking `ef` wide."""
        if self._graph is None or n <= 0:
            return np.zeros(0, dtype=np.int64)
        self._graph.expansion_search = max(ef, n)
        found = self._graph.search(
            np.asarray(q, dtype=np.float32), min(n, self.meta.rows), threads=1
        )
        rows = np.asarray(found.keys, dtype=np.int64)
        if _file_pages() - self._resident_from > GRAPH_RESIDENT_GROWTH:
            _let_go(self.folder / "graph.usearch")
            self._resident_from = _file_pages()
        return rows[(rows >= 0) & (rows < self.meta.rows)]

    def rows(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of these rows (any order), read from the file: runs of adjacent
        rows are one read each, so a time window (adjacent records) costs a few reads, and each
        read lands in the answer's own buffer (a graph's scattered candidates are ~100 one-row
        reads a search: no per-read array to make and copy)."""
        rows = np.asarray(rows, dtype=np.int64)
        width = self.meta.dim * 4
        if (
            len(rows) and len(rows) * width <= _ROW_BYTES_LIMIT and bool((np.diff(rows) == 1).all())
        ):  # one run in order (a time window): the read itself, no copy
            return self._read(int(rows[0]), len(rows))
        if not len(rows):
            return np.empty((0, self.meta.dim), dtype=np.float32)
        wanted, inverse = np.unique(rows, return_inverse=True)
        out = np.empty((len(wanted), self.meta.dim), dtype=np.float32)
        view = out.data.cast("B")
        breaks = np.flatnonzero(np.diff(wanted) > 1) + 1
        per_read = max(1, _ROW_BYTES_LIMIT // width)
        starts, ends, firsts = np.r_[0, breaks], np.r_[breaks, len(wanted)], wanted.tolist()
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            for s in range(a, b, per_read):
                e = min(b, s + per_read)
                size = (e - s) * width
                if (
                    os.preadv(self._fd, [view[s * width : s * width + size]], firsts[s] * width)
                    != size
                ):
                    raise OSError(f"{self.folder / 'vectors.f32'} is shorter than its rows")
        return out if len(wanted) == len(rows) and bool((np.diff(rows) > 0).all()) else out[inverse]

    def _read(self, first: int, count: int) -> np.ndarray:
        """Rows first..first+count-1; `OSError` when the file was cut short since it opened."""
        width = self.meta.dim * 4
        data = os.pread(self._fd, count * width, first * width)
        if len(data) != count * width:
            raise OSError(f"{self.folder / 'vectors.f32'} is shorter than its rows")
        return np.frombuffer(data, dtype=np.float32).reshape(count, self.meta.dim)

    def rows_of(self, records: np.ndarray) -> np.ndarray:
        """Every row (each part) of these records; records without one are left out."""
        records = np.asarray(records, dtype=np.int64)
        lo = np.searchsorted(self.ids, records, side="left")
        hi = np.searchsorted(self.ids, records, side="right")
        present = hi > lo
        lo, hi = lo[present], hi[present]
        if not len(lo):
            return np.zeros(0, dtype=np.int64)
        if bool((hi - lo == 1).all()):
            return lo.astype(np.int64)
        return np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)])


def check(folder: Path, *, full: bool = False) -> tuple[Meta | None, dict[str, Seal], str | None]:
    """(what the generation in `folder` was made of, its seals as found, what is wrong with it).
    A generation of another format is (None, {}, None): outdated, rebuilt without a word.
    `full` hashes every file (doctor); otherwise only those whose stat moved (`_seal`)."""
    try:
        text = (folder / "meta.json").read_text("utf-8")
    except FileNotFoundError:
        return None, {}, "meta.json is missing"
    except (OSError, UnicodeDecodeError):
        return None, {}, "meta.json cannot be read"
    raw = unsealed(text)
    if raw is None:
        with contextlib.suppress(ValueError, AttributeError):
            if json.loads(text).get("format") != FORMAT:
                return None, {}, None
        return None, {}, "meta.json does not match its own checksum"
    try:
        files = raw.pop("files")
        meta = Meta(**raw)
        wanted = {n for n in DATA_FILES if meta.rows or n != "graph.usearch"}
        if (
            set(files) != wanted
            or meta.format != FORMAT
            or files["vectors.f32"][0] != meta.rows * meta.dim * 4
        ):
            return None, {}, "meta.json does not describe the generation's files"
    except (KeyError, TypeError, AttributeError, IndexError):
        return None, {}, "meta.json does not describe the generation's files"
    problem, seals = check_files(folder, files, full=full)
    if problem is not None:
        return None, {}, problem
    if seals != files:  # whole, but its stat moved: the next open is a stat again
        with contextlib.suppress(OSError):
            write_atomically(folder / "meta.json", sealed_text({**raw, "files": seals}))
    return meta, seals, None


def damaged_generation(
    root: Path, name: str, *, discard_it: bool = False
) -> tuple[Path, str] | None:
    """(the generation `N.current` names, what is wrong with it), every byte read (doctor);
    None when it is whole or there is none. `discard_it` deletes a damaged one."""
    current = VectorFile.current(root, name)
    if current is None or not (root / current).is_dir():
        return None
    problem = check(root / current, full=True)[2]
    if problem is None:
        return None
    if discard_it:
        discard(root / current, problem)
    return root / current, problem


def discard(folder: Path, problem: str) -> None:
    """Report a damaged generation once and delete it: it is made again from the database."""
    log.warning(
        "the search file %s is damaged (%s); searching the database until it is rebuilt",
        folder,
        problem,
    )
    shutil.rmtree(folder, ignore_errors=True)


# -- building ----------------------------------------------------------------------------------
@contextlib.contextmanager
def build_lock(root: Path, name: str) -> Iterator[bool]:
    """The one builder of `name`'s generation: yields False when another process holds it."""
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_generation(
    root: Path, name: str, meta: Meta, ids: np.ndarray, matrix: np.ndarray, threads: int = 1
) -> Path:
    """Write and publish a generation of `ids` (ascending) and their unit `matrix` rows; the
    caller holds `build_lock`. Earlier generations and unpublished folders are removed."""
    from usearch.index import Index

    folder = root / f"{name}-{meta.position}-{secrets.token_hex(4)}"
    tmp = root / f".{folder.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    np.save(tmp / "ids.npy", np.ascontiguousarray(ids, dtype=np.int64))
    np.ascontiguousarray(matrix, dtype=np.float32).tofile(tmp / "vectors.f32")
    if len(ids):
        graph = Index(
            ndim=meta.dim,
            metric="cos",
            dtype="i8",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
        )
        for start in range(0, len(ids), 65536):
            stop = min(len(ids), start + 65536)
            graph.add(np.arange(start, stop), matrix[start:stop], threads=threads)
        graph.save(str(tmp / "graph.usearch"))
    for f in tmp.iterdir():
        _fsync(f)
    seals = seal_files(tmp, [f.name for f in tmp.iterdir()])
    (tmp / "meta.json").write_text(sealed_text({**meta.__dict__, "files": seals}), "utf-8")
    _fsync(tmp / "meta.json")
    tmp.rename(folder)
    pointer = root / f".{name}.current.tmp"
    pointer.write_text(folder.name, "utf-8")
    _fsync(pointer)
    pointer.replace(root / f"{name}.current")
    _fsync(root)
    for old in root.iterdir():
        stale = old.name.startswith((f"{name}-", f".{name}-")) and old.name != folder.name
        if stale and old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)  # a process still mapping it keeps its pages
    return folder
