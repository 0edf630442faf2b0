"""Reading table b-trees straight from a file's pages, for files SQLite cannot read at all.

When the damage takes part of the list of tables (`sqlite_schema`, the b-tree rooted at page 1) —
a file cut in half loses the schema pages written last — SQLite refuses every statement, though
most tables' own pages may be intact. This reads what is left below SQLite, as the `.recover` of
SQLite's shell does: the readable rows of `sqlite_schema` give each table's root page and its
`CREATE TABLE`, and each table's b-tree is walked from there. A page that is missing (past the
end of the file), of an unexpected kind, or already seen (a loop) is skipped with what hangs
below it; every other row is returned. Only the main file is read, never its write-ahead log.

The format: https://www.sqlite.org/fileformat2.html (b-tree pages, cells, records, overflow).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

INTERIOR, LEAF = 0x05, 0x0D  # table b-tree pages (index b-trees are never read)
Row = tuple[int, list[object]]  # (rowid, values in the table's column order)


@dataclass
class PageFile:
    """The pages of one database file, read whole (a repair reads small files)."""

    data: bytes
    page_size: int
    usable: int
    encoding: str
    missing: set[int] = field(default_factory=set)  # pages wanted but past the end of the file

    @classmethod
    def open(cls, path: Path) -> PageFile:
        data = path.read_bytes()
        raw = int.from_bytes(data[16:18], "big")
        size = 65536 if raw == 1 else raw
        encoding = {2: "utf-16-le", 3: "utf-16-be"}.get(int.from_bytes(data[56:60], "big"), "utf-8")
        return cls(data, size, size - data[20], encoding)

    @property
    def pages(self) -> int:
        return len(self.data) // self.page_size

    def page(self, number: int) -> bytes | None:
        if not 1 <= number <= self.pages:
            self.missing.add(number)
            return None
        start = (number - 1) * self.page_size
        return self.data[start : start + self.page_size]

    def schema(self, wanted: set[str]) -> tuple[dict[str, tuple[int, str]], int]:
        """name -> (root page, `CREATE TABLE`) of each table whose entry can be read, and how
        many pages had to be searched for it. Entries are read from the b-tree rooted at page
        1; when some of `wanted` are missing there (page 1 itself is damaged: it is the root,
        the entries mostly sit on leaves elsewhere), every leaf page holding such entries is
        read too, as SQLite's `.recover` does."""
        found = _tables(v for _, v in self.rows(1))
        if not wanted - set(found):
            return found, 0
        leaves = [n for n in range(2, self.pages + 1) if self._schema_leaf(n)]
        for number in leaves:
            for name, entry in _tables(v for _, v in self._leaf_rows(number)).items():
                found.setdefault(name, entry)
        return found, len(leaves)

    def _schema_leaf(self, number: int) -> bool:
        page = self.page(number)
        return page is not None and page[0] == LEAF and b"CREATE TABLE" in page

    def _leaf_rows(self, number: int) -> Iterator[Row]:
        page = self.page(number)
        if page is None:
            return
        cells = int.from_bytes(page[3:5], "big")
        for i in range(min(cells, self.page_size // 2)):
            try:
                yield self._cell(page, int.from_bytes(page[8 + 2 * i : 10 + 2 * i], "big"))
            except (IndexError, ValueError, struct.error, UnicodeDecodeError):
                continue

    def rows(self, root: int) -> Iterator[Row]:
        """Every readable row of the table b-tree rooted at `root`, in rowid order."""
        seen: set[int] = set()
        todo = [root]
        while todo:
            number = todo.pop()
            if number in seen:
                continue
            seen.add(number)
            page = self.page(number)
            if page is None:
                continue
            at = 100 if number == 1 else 0
            kind, cells = page[at], int.from_bytes(page[at + 3 : at + 5], "big")
            if kind not in (INTERIOR, LEAF):
                continue
            head = at + (12 if kind == INTERIOR else 8)
            pointers = [
                int.from_bytes(page[head + 2 * i : head + 2 * i + 2], "big") for i in range(cells)
            ]
            if kind == INTERIOR:
                right = int.from_bytes(page[at + 8 : at + 12], "big")
                children = [int.from_bytes(page[p : p + 4], "big") for p in pointers]
                todo += reversed([*children, right])  # popped in key order
                continue
            for p in pointers:
                try:
                    yield self._cell(page, p)
                except (IndexError, ValueError, struct.error, UnicodeDecodeError):
                    continue  # a garbled cell costs that row

    def _cell(self, page: bytes, at: int) -> Row:
        size, at = _varint(page, at)
        rowid, at = _varint(page, at)
        rowid = rowid - (1 << 64) if rowid >= 1 << 63 else rowid
        local = self._local(size)
        payload = page[at : at + local]
        if local < size:
            payload += self._overflow(
                int.from_bytes(page[at + local : at + local + 4], "big"), size - local
            )
        if len(payload) < size:
            raise ValueError("overflow pages are missing")
        return rowid, _record(payload, self.encoding)

    def _local(self, size: int) -> int:
        """How much of a payload of `size` bytes sits on the leaf page itself."""
        u = self.usable
        most = u - 35
        if size <= most:
            return size
        least = (u - 12) * 32 // 255 - 23
        k = least + (size - least) % (u - 4)
        return k if k <= most else least

    def _overflow(self, number: int, left: int) -> bytes:
        out = b""
        seen: set[int] = set()
        while number and left > 0 and number not in seen:
            seen.add(number)
            page = self.page(number)
            if page is None:
                break
            chunk = page[4 : min(self.usable, 4 + left)]
            out, left = out + chunk, left - len(chunk)
            number = int.from_bytes(page[:4], "big")
        return out


def _tables(entries: Iterable[list[object]]) -> dict[str, tuple[int, str]]:
    """The tables among `sqlite_schema` rows: (type, name, tbl_name, rootpage, sql)."""
    found: dict[str, tuple[int, str]] = {}
    for v in entries:
        if len(v) == 5 and v[0] == "table" and isinstance(v[3], int) and v[4]:
            found.setdefault(str(v[1]), (v[3], str(v[4])))
    return found


def page_size_of(data: bytes) -> int | None:
    """The page size of a file whose header is lost, told by its pages: the smallest size at
    whose multiples about as large a share of places start with a b-tree page header as at the
    best size (a multiple of the true size samples the same pages, so its share is the same; a
    smaller one lands mid-page half the time or more, so its share falls by half). Overflow
    pages (vectors, long texts) hold no header, so the share itself may be small."""
    scores: dict[int, float] = {}
    found: dict[int, int] = {}
    for size in (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536):
        starts = range(size, len(data) - size + 1, size)
        if len(data) % size or not starts:
            continue
        found[size] = sum(_looks_like_btree(data, at, size) for at in starts)
        scores[size] = found[size] / len(starts)
    best = max(scores.values(), default=0.0)
    chosen = [size for size, score in scores.items() if score >= 0.8 * best]
    if not chosen or found[min(chosen)] < 3:
        return None
    return min(chosen)


def _looks_like_btree(data: bytes, at: int, size: int) -> bool:
    kind = data[at]
    if kind not in (0x02, 0x05, 0x0A, 0x0D):
        return False
    head = 12 if kind in (0x02, 0x05) else 8
    cells = int.from_bytes(data[at + 3 : at + 5], "big")
    content = int.from_bytes(data[at + 5 : at + 7], "big") or 65536
    return head + 2 * cells <= content <= size and data[at + 7] <= 60


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise ValueError("bad varint")  # pragma: no cover - the loop always returns


_INTS = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _record(payload: bytes, encoding: str) -> list[object]:
    """The values of one record (SQLite's record format)."""
    header, at = _varint(payload, 0)
    types = []
    while at < header:
        t, at = _varint(payload, at)
        types.append(t)
    body, values = header, cast(list[object], [])
    for t in types:
        if t == 0:
            values.append(None)
        elif t in _INTS:
            n = _INTS[t]
            values.append(int.from_bytes(payload[body : body + n], "big", signed=True))
            body += n
        elif t == 7:
            values.append(struct.unpack(">d", payload[body : body + 8])[0])
            body += 8
        elif t in (8, 9):
            values.append(t - 8)
        elif t >= 12:
            n = (t - 12) // 2
            raw = payload[body : body + n]
            if len(raw) < n:
                raise ValueError("record cut short")
            values.append(raw.decode(encoding) if t % 2 else bytes(raw))
            body += n
        else:
            raise ValueError(f"serial type {t} is reserved")
    return values
