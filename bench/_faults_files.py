"""Hostile and ordinary file operations on a library: symlink escapes and editor save patterns.

Everything runs on real files in a temporary root with the `none` embedder (the tests here are
about which bytes reach the index, not about vectors). Searches that check the watcher use a
separate `Library` with `catch_up=False`, so a search never indexes the edit it is looking for.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from _faults_report import Row

from tests.kills import BIN, Run, cli_env, run
from tideline.app import library_from
from tideline.config import DEFAULTS
from tideline.errors import TidelineError
from tideline.library import Library

SECRET = "outsidesecretzq"


def _collection(root: Path, name: str, notes: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "_meta.yaml").write_text(f"description: faults collection {name}\n")
    for rel, text in notes.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def _fingerprint(folder: Path) -> dict[str, str]:
    """Every file under `folder` with a hash of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# -- symlink escapes ----------------------------------------------------------------------------
SWAPPER = """
import os, sys
note, outside = sys.argv[1], sys.argv[2]
link, plain = note + ".swap-link", note + ".swap-plain"
while True:
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(outside, link)
    os.replace(link, note)
    with open(plain, "w") as fh:
        fh.write("# Inside\\n\\nan ordinary note about harbour lanterns\\n")
    os.replace(plain, note)
"""


def symlink_race(base: Path, searches: int) -> Row:
    """Search while another process flips a note between a file and a link out of the root.

    Each search catches up first, so each one re-reads the note as it is at that moment; the
    figure says how many did (the race was live) next to how many showed the outside text.
    """
    root, outside = base / "race-lib", base / "race-outside.md"
    outside.write_text(f"# Secret\n\n{SECRET} lives outside the library\n")
    folder = _collection(root, "race", {"note.md": "# Inside\n\nharbour lanterns\n"})
    leaks = errors = reread = 0
    with library_from(DEFAULTS, root, None) as lib:
        lib.index()
        swapper = subprocess.Popen(
            [sys.executable, "-c", SWAPPER, str(folder / "note.md"), str(outside)]
        )
        _poll(lambda: os.path.islink(folder / "note.md"), 30)  # the swapper is running
        try:
            for _ in range(searches):
                try:
                    result = lib.search(SECRET, "race", mode="lex")
                except TidelineError:
                    errors += 1
                    continue
                reread += result.caught_up > 0
                leaks += any(SECRET in h.text for h in result.hits)
        finally:
            swapper.kill()
            swapper.wait()
    figure = (
        f"{leaks} of {searches} searches showed the outside file ({reread} re-read the swapped "
        f"note first, {errors} refused)"
    )
    return Row("symlink swap race (note ↔ link out)", searches, leaks, figure)


def _one_line_error(result: Run) -> bool:
    """A refusal as the rules want it: non-zero exit, one line on stderr, no traceback."""
    lines = result.stderr.strip().splitlines()
    return result.returncode != 0 and len(lines) == 1 and "Traceback" not in result.stderr


def memo_dir_symlink(base: Path) -> Row:
    """`.memo` is a link to an outside folder holding someone else's index.db and state.json.

    Fails if a file behind the link is written or deleted, or if a command dies with anything but
    a one-line error (refusing the link, as memo does since issue 9, is the right answer).
    """
    root, foreign = base / "memo-lib", base / "foreign"
    foreign.mkdir()
    (foreign / "index.db").write_bytes(b"someone else's file, not an index\n")
    (foreign / "state.json").write_text('{"owner": "someone else"}\n')
    folder = _collection(root, "gamma", {"n.md": "# N\n\nbasalt willow\n"})
    os.symlink(foreign, folder / ".memo", target_is_directory=True)
    before = _fingerprint(foreign)
    env, memo = cli_env(base / "memo-env"), str(BIN / "memo")
    runs = {
        "index": run([memo, "index", "--root", str(root), "--json"], env),
        "search": run([memo, "search", "basalt", "--root", str(root), "--mode", "lex"], env),
    }
    after = _fingerprint(foreign)
    changed = sorted(set(before) ^ set(after) | {k for k in before if after.get(k) != before[k]})
    refused = [name for name, r in runs.items() if _one_line_error(r)]
    crashed = [name for name, r in runs.items() if "Traceback" in r.stderr]
    figure = (
        f"outside files written or deleted: {', '.join(changed) or 'none'}; refused with one "
        f"line: {', '.join(refused) or 'none'}; tracebacks: {', '.join(crashed) or 'none'}"
    )
    return Row("`.memo` symlinked to an outside folder", 1, int(bool(changed or crashed)), figure)


def meta_symlink(base: Path) -> Row:
    """`_meta.yaml` is a link to an outside file; its text must not surface anywhere."""
    root, outside = base / "meta-lib", base / "outside-meta.yaml"
    leak = f"{SECRET} description from outside"  # the file's text, not the query echoed back
    outside.write_text(f"description: {leak}\n")
    folder = _collection(root, "delta", {"n.md": "# N\n\nkestrel vellum\n"})
    (folder / "_meta.yaml").unlink()
    os.symlink(outside, folder / "_meta.yaml")
    env, memo = cli_env(base / "meta-env"), str(BIN / "memo")
    outputs = {
        "index": run([memo, "index", "--root", str(root), "--json"], env),
        "status": run([memo, "status", "--root", str(root), "--json"], env),
        "route": run([memo, "route", SECRET, "--root", str(root), "--json"], env),
    }
    leaked = [name for name, r in outputs.items() if leak in r.stdout + r.stderr]
    registry = root / "_registry.yaml"
    if registry.exists() and leak in registry.read_text():
        leaked.append("_registry.yaml")
    crashed = [name for name, r in outputs.items() if "Traceback" in r.stderr]
    flagged = "links outside" in outputs["status"].stdout + outputs["status"].stderr
    figure = (
        f"outside description shown by: {', '.join(leaked) or 'nothing'}; tracebacks: "
        f"{', '.join(crashed) or 'none'}; `memo status` names the link: {'yes' if flagged else 'no'}"
    )
    return Row("`_meta.yaml` symlinked outside", 4, len(leaked) + len(crashed), figure)


# -- editor save patterns -----------------------------------------------------------------------
class Watched:
    """A `memo watch` process on a one-collection library, and a reader that never catches up."""

    def __init__(self, base: Path):
        self.root = base / "watched"
        self.folder = _collection(self.root, "edits", {})
        self.log = base / "watch.log"
        self.serial = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.reader: Library | None = None

    def marker(self) -> str:
        self.serial += 1
        return f"ed{self.serial:05d}q"

    def start(self) -> None:
        note = self.folder / "same-size.md"
        note.write_text(f"# Same size\n\n{self.marker()} copper meadow\n")
        old = time.time() - 3600
        os.utime(note, (old, old))
        args = [str(BIN / "memo"), "watch", str(self.root), "--debounce", "0.2"]
        with self.log.open("wb") as err:
            self.proc = subprocess.Popen(
                args,
                env=cli_env(self.root.parent / "watch-env"),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        _poll(lambda: "watching" in self.log.read_text(errors="replace"), 60)
        self.reader = library_from(DEFAULTS, self.root, None)

    def stop(self) -> None:
        if self.reader is not None:
            self.reader.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def found(self, marker: str, path_part: str) -> bool:
        assert self.reader is not None
        try:
            hits = self.reader.search(marker, "edits", mode="lex", catch_up=False).hits
        except TidelineError:
            return False
        return any(marker in h.text and path_part in h.path for h in hits)


def _poll(check: Callable[[], bool], timeout: float) -> bool:
    """Poll `check` until true or the deadline; report which."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def _vim(w: Watched) -> tuple[str, str]:
    note, marker = w.folder / "vim.md", w.marker()
    if not note.exists():
        note.write_text("# Vim\n\nfirst draft\n")
    probe = w.folder / "4913"
    probe.write_text("")
    probe.unlink()
    backup = w.folder / "vim.md~"
    os.rename(note, backup)
    note.write_text(f"# Vim\n\n{marker} saved by vim\n")
    backup.unlink()
    return marker, "vim.md"


def _atomic(w: Watched) -> tuple[str, str]:
    note, marker = w.folder / "atomic.md", w.marker()
    tmp = w.folder / ".atomic.md.tmp"
    tmp.write_text(f"# Atomic\n\n{marker} saved by replace\n")
    os.replace(tmp, note)
    return marker, "atomic.md"


def _recreate(w: Watched) -> tuple[str, str]:
    note, marker = w.folder / "recreate.md", w.marker()
    note.unlink(missing_ok=True)
    note.write_text(f"# Recreate\n\n{marker} written again\n")
    return marker, "recreate.md"


def _rapid(w: Watched) -> tuple[str, str]:
    note, marker = w.folder / "rapid.md", ""
    for _ in range(50):
        marker = w.marker()
        note.write_text(f"# Rapid\n\n{marker} one of fifty writes\n")
    return marker, "rapid.md"


def _rename_file(w: Watched) -> tuple[str, str]:
    marker = w.marker()
    old = w.folder / "before.md"
    old.write_text(f"# Moved\n\n{marker} moved file\n")
    new = w.folder / f"after-{marker}.md"
    os.rename(old, new)
    return marker, new.name


def _rename_folder(w: Watched) -> tuple[str, str]:
    marker = w.marker()
    old = w.folder / "sub"
    old.mkdir(exist_ok=True)
    (old / "inner.md").write_text(f"# Inner\n\n{marker} in a moved folder\n")
    new = w.folder / f"sub-{marker}"
    os.rename(old, new)
    return marker, f"{new.name}/inner.md"


def _same_size(w: Watched) -> tuple[str, str]:
    note, marker = w.folder / "same-size.md", w.marker()
    st = note.stat()
    note.write_text(f"# Same size\n\n{marker} copper meadow\n")
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))
    return marker, "same-size.md"


PATTERNS: dict[str, Callable[[Watched], tuple[str, str]]] = {
    "vim (4913 probe, rename to backup, write, delete)": _vim,
    "atomic replace (tmp + os.replace)": _atomic,
    "delete + recreate": _recreate,
    "50 rapid writes": _rapid,
    "rename of a file": _rename_file,
    "rename of a folder": _rename_folder,
    "same size, same mtime (os.utime restore)": _same_size,
}


def editor_patterns(base: Path, repeats: int, deadline: float = 10.0) -> list[Row]:
    """Each save pattern `repeats` times under `memo watch`; an edit not found in time is lost."""
    watched, rows = Watched(base), []
    watched.start()
    try:
        for name, edit in PATTERNS.items():
            lost, seconds = 0, []
            for _ in range(repeats):
                marker, path_part = edit(watched)
                started = time.monotonic()
                if _poll(lambda m=marker, p=path_part: watched.found(m, p), deadline):
                    seconds.append(time.monotonic() - started)
                else:
                    lost += 1
            slowest = f"slowest found in {max(seconds):.1f} s" if seconds else "none found"
            figure = f"{lost} lost edits (deadline {deadline:.0f} s); {slowest}"
            rows.append(Row(f"editor save: {name}", repeats, lost, figure))
    finally:
        watched.stop()
    return rows


# -- same size, same mtime, no watcher ----------------------------------------------------------
def _touch_r(note: Path, spare: Path, text: str) -> None:
    """Write in place, then put the old times back (`touch -r`)."""
    st = note.stat()
    note.write_text(text)
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))


def _cp_p(note: Path, spare: Path, text: str) -> None:
    """Copy a same-size file with the note's own mtime over it, keeping the inode (`cp -p`)."""
    st = note.stat()
    spare.write_text(text)
    os.utime(spare, ns=(st.st_atime_ns, st.st_mtime_ns))
    shutil.copy2(spare, note)


def _rsync_t(note: Path, spare: Path, text: str) -> None:
    """Write a temporary file with the note's mtime and rename it over (`rsync -t`)."""
    st = note.stat()
    tmp = note.with_name(f".{note.name}.rsync")
    tmp.write_text(text)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, note)


RESTORES: dict[str, Callable[[Path, Path, str], None]] = {
    "touch -r": _touch_r,
    "cp -p": _cp_p,
    "rsync -t": _rsync_t,
}


def same_size_catch_up(base: Path, repeats: int) -> Row:
    """Same-size edits that restore the mtime, with no watcher: `memo status` must count the note
    as behind, and the next search (its stat catch-up) must find the new text."""
    root, spare = base / "restore-lib", base / "restore-spare.md"
    folder = _collection(root, "restore", {})
    note, serial, lost, not_behind, trials = folder / "note.md", 0, 0, 0, 0
    note.write_text("# Restored\n\nrs00000q copper meadow\n")
    old = time.time() - 3600
    os.utime(note, (old, old))
    with library_from(DEFAULTS, root, None) as lib:
        lib.index()
        for _ in range(repeats):
            for restore in RESTORES.values():
                serial += 1
                trials += 1
                marker = f"rs{serial:05d}q"
                restore(note, spare, f"# Restored\n\n{marker} copper meadow\n")
                behind = lib.status("restore")["collections"][0].get("behind", 0)
                hits = lib.search(marker, "restore", mode="lex").hits
                found = any(marker in h.text for h in hits)
                lost += not found
                not_behind += behind == 0
    figure = (
        f"{lost} lost edits, {not_behind} times `memo status` said behind 0 "
        f"({', '.join(RESTORES)}, each {repeats}×)"
    )
    return Row("same size, same mtime, no watcher: next search", trials, lost + not_behind, figure)


def append_race(base: Path, seconds: float, saves_per_second: float = 50.0) -> Row:
    """`memo write --append` (the library's write, in-process for volume) while a person's
    editor saves the same note `saves_per_second` times a second (read, add a line, atomic
    replace): every line saved by hand must still be in the note at the end. #21: 1 of 216 hand
    edits in 40 s was overwritten (read, then replace, without a check). An editor's own
    read-modify-write may drop an agent's line (the editor's race, not memo's): not counted."""
    root = base / "append-race"
    _collection(root, "log", {"day.md": "# Day\n"})
    note = root / "log" / "day.md"
    stop, saved = threading.Event(), []

    def edit() -> None:
        while not stop.wait(1 / saves_per_second):
            line = f"hand {len(saved) + 1}"
            tmp = note.with_name(".day.md.swp")
            tmp.write_text(note.read_text() + line + "\n")
            tmp.replace(note)
            saved.append(line)

    editor = threading.Thread(target=edit)
    editor.start()
    appends, busy = 0, 0
    deadline = time.monotonic() + seconds
    try:
        with library_from(DEFAULTS, root) as lib:
            while time.monotonic() < deadline:
                try:
                    lib.write("log/day.md", f"agent {appends}", append=True)
                except TidelineError:
                    busy += 1  # "changed 8 times while it was being written; try again"
                appends += 1
    finally:
        stop.set()
        editor.join()
    lines = set(note.read_text().splitlines())
    lost = [s for s in saved if s not in lines]
    return Row(
        "`memo write --append` while a person's editor saves the note",
        len(saved),
        len(lost),
        f"{len(lost)} of {len(saved)} hand saves lost ({saves_per_second:.0f} saves/s for "
        f"{seconds:.0f} s) beside {appends:,} appends ({busy} refused as busy, to retry)",
    )
