"""Real damage to the disposable search files beside memory.db (issue 31): the ways a disk, a
stray write or a person breaks `memory.db.vectors/*` and `memory.db.lexical/*`.

Each kind takes a file and a seed and changes its bytes in place (the size stays, but for
`truncated`), so the damage is the kind a size check cannot see.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def run_script(script: str, db: Path) -> str:
    """Run a damage script on `db` in a new interpreter from the repository's root, so a crash
    (SIGSEGV) fails the calling test, not the whole run; its stdout."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(db)],
        cwd=Path(__file__).parent.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    return done.stdout


def random_bytes(path: Path, seed: int) -> None:
    """30 % of the file, from a random offset, overwritten with random bytes."""
    size = path.stat().st_size
    rng = random.Random(seed)
    length = max(1, size * 3 // 10)
    start = rng.randrange(0, max(1, size - length))
    with path.open("r+b") as f:
        f.seek(start)
        f.write(rng.randbytes(min(length, size)))


def zeroed(path: Path, seed: int) -> None:
    """A stretch of zeros (a page the disk lost), a quarter of the file."""
    size = path.stat().st_size
    rng = random.Random(seed)
    length = max(1, size // 4)
    with path.open("r+b") as f:
        f.seek(rng.randrange(0, max(1, size - length)))
        f.write(bytes(min(length, size)))


def shuffled(path: Path, seed: int) -> None:
    """The file's blocks (64 bytes, fewer in a small file) in another order: every byte still
    there, not in its place (a file whose blocks all read the same gets its first byte flipped)."""
    data = path.read_bytes()
    width = max(1, min(64, len(data) // 8))
    blocks = [data[i : i + width] for i in range(0, len(data), width)]
    random.Random(seed).shuffle(blocks)
    out = b"".join(blocks)
    if out == data and data:
        out = bytes([data[0] ^ 0xFF]) + data[1:]
    with path.open("r+b") as f:
        f.write(out)


def truncated(path: Path, seed: int) -> None:
    """Cut to a random length short of its size."""
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.truncate(random.Random(seed).randrange(0, max(1, size)))


KINDS: dict[str, Callable[[Path, int], None]] = {
    "random": random_bytes,
    "zeroed": zeroed,
    "shuffled": shuffled,
    "truncated": truncated,
}


def vector_files(db: Path) -> list[Path]:
    """Every file of the published vector generations beside `db`."""
    root = db.with_name(db.name + ".vectors")
    return sorted(p for p in root.glob("*-*/*") if p.is_file() and not p.name.startswith("."))


def lexical_files(db: Path) -> list[Path]:
    """Every tantivy file (and the state) beside `db`, the lock files left out."""
    root = db.with_name(db.name + ".lexical")
    found = [p for p in root.glob("*-*/*") if p.is_file() and not p.name.endswith(".lock")]
    return sorted(found + list(root.glob("*.state")))
