"""SIGKILL real CLI processes at random points and check what they leave behind.

Shared by tests/test_faults.py (a few kills, `none` embedder) and bench/faults.py (hundreds). A
trial starts one command (`memo index`, `tideline import` or `tideline write`) as its own process,
kills it after a random delay (a process that finished first counts as acknowledged), then checks:

- the database opens and `PRAGMA quick_check` says ok (corrupt otherwise);
- every acknowledged write is present, exactly once (lost / duplicated otherwise);
- an import is all or nothing before the re-run (partial otherwise);
- after re-running the command, no vector is missing when an embedder is configured.

The delay is uniform over [0.25, 1.05] of the command's uninterrupted run time, measured first:
the start of every run is interpreter start-up, where a kill proves nothing. On a loaded machine
many runs finish before their kill, so trials go on until `kills` processes were really killed
(at most `TRIALS_PER_KILL` times as many trials).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import apsw

BIN = Path(sys.executable).parent
KILL_WINDOW = (0.25, 1.05)
TRIALS_PER_KILL = 3
WORDS = [
    "tide",
    "harbour",
    "lantern",
    "copper",
    "meadow",
    "quartz",
    "ember",
    "signal",
    "orchard",
    "basalt",
    "willow",
    "ferry",
    "cobalt",
    "thistle",
    "granite",
    "pylon",
    "saffron",
    "estuary",
    "kestrel",
    "vellum",
]


def cli_env(base: Path, embedder: str = "none", **extra: str) -> dict[str, str]:
    """The environment of a CLI process: its own home and cache, one OpenMP thread."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIDELINE_", "MEMO_"))}
    env.update(
        AGENT_NAME="faults",
        TIDELINE_HOME=str(base / "home"),
        TIDELINE_EMBED_CACHE=str(base / "embed-cache.db"),
        TIDELINE_EMBEDDER=embedder,
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
    )
    env.update(extra)
    return env


def stub_env(base: Path, url: str) -> dict[str, str]:
    """A CLI environment whose embedder is the OpenAI-protocol stub at `url` (127.0.0.1)."""
    return cli_env(base, "openai", TIDELINE_EMBED_URL=url, TIDELINE_EMBED_MODEL="stub")


@dataclass
class Run:
    """One process: killed or finished, with its exit code and output."""

    killed: bool
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def acknowledged(self) -> bool:
        return not self.killed and self.returncode == 0


def run(args: list[str], env: dict[str, str], kill_after: float | None = None) -> Run:
    """Run `args`; with `kill_after`, SIGKILL it at that many seconds unless it finished first."""
    started = time.monotonic()
    proc = subprocess.Popen(
        args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    killed = False
    try:
        out, err = proc.communicate(timeout=kill_after if kill_after is not None else 300)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        killed = kill_after is not None
    return Run(
        killed,
        proc.returncode,
        out.decode(errors="replace"),
        err.decode(errors="replace"),
        time.monotonic() - started,
    )


def quick_check(path: Path) -> bool:
    """The file opens as SQLite and `PRAGMA quick_check` says ok (a missing file is fine)."""
    if not path.exists():
        return True
    try:
        conn = apsw.Connection(str(path))
        try:
            return conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        finally:
            conn.close()
    except apsw.Error:
        return False


def query(path: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Rows of one read-only query on a database file."""
    conn = apsw.Connection(str(path))
    try:
        return [tuple(r) for r in conn.execute(sql, params).fetchall()]
    finally:
        conn.close()


@dataclass
class KillTally:
    """What the kills of one command found; `failures` counts trials with any violation."""

    command: str
    trials: int = 0
    killed: int = 0
    corrupt: int = 0
    lost: int = 0
    duplicated: int = 0
    partial: int = 0
    rerun_failed: int = 0
    missing_vectors: int = 0
    failed_trials: int = 0
    notes: list[str] = field(default_factory=list)

    def record(self, **found: int) -> None:
        """Add one trial's counts; a trial with any non-zero count is a failure."""
        self.trials += 1
        for key, value in found.items():
            if key == "missing_vectors":  # a standing count, not an event: keep the worst seen
                self.missing_vectors = max(self.missing_vectors, value)
            else:
                setattr(self, key, getattr(self, key) + value)
        if any(v for k, v in found.items() if k != "killed"):
            self.failed_trials += 1

    def figure(self) -> str:
        parts = [
            f"{self.killed} killed",
            f"{self.corrupt} corrupt",
            f"{self.lost} lost",
            f"{self.duplicated} duplicated",
            f"{self.partial} partial",
            f"{self.missing_vectors} vectors missing after a re-run (worst)",
        ]
        if self.rerun_failed:
            parts.append(f"{self.rerun_failed} re-runs failed")
        return ", ".join(parts)


def _delay(rng: random.Random, baseline: float) -> float:
    return rng.uniform(*KILL_WINDOW) * baseline


def _rebased(baseline: float, trial: Run) -> float:
    """The run time the next delays scale: a trial that finished before its kill ran
    uninterrupted, and a baseline measured in a burst of load would let every later run finish
    first (15 trials of `memo index`, none killed, in a clean-checkout CI run)."""
    return baseline if trial.killed else min(baseline, trial.seconds)


def _more(tally: KillTally, kills: int) -> bool:
    """Another trial: until `kills` processes were killed, within the trial budget."""
    return tally.killed < kills and tally.trials < TRIALS_PER_KILL * kills


def _missing_vectors(env: dict[str, str]) -> int:
    """Turns and narratives without a vector, as `tideline stats` reports them."""
    if env.get("TIDELINE_EMBEDDER", "none") == "none":
        return 0
    out = run([str(BIN / "tideline"), "stats", "--json"], env)
    data = json.loads(out.stdout)
    return int(
        data["turns"] - data["turn_vectors"] + data["narratives"] - data["narrative_vectors"]
    )


def _memory_db(env: dict[str, str]) -> Path:
    return Path(env["TIDELINE_HOME"]) / "memory.db"


# -- tideline import --------------------------------------------------------------------------
def _conversation(path: Path, trial: int, turns: int, rng: random.Random) -> None:
    messages = [
        {
            "role": ("user", "assistant")[j % 2],
            "content": f"trial {trial} turn {j} " + " ".join(rng.choices(WORDS, k=12)),
        }
        for j in range(turns)
    ]
    path.write_text(json.dumps(messages))


def _session_turns(db: Path, key: str) -> int:
    rows = query(
        db, "SELECT count(*) FROM turns JOIN sessions s ON s.id = session_id WHERE key = ?", (key,)
    )
    return int(rows[0][0])  # type: ignore[call-overload]


def kill_imports(
    base: Path, env: dict[str, str], kills: int, turns: int = 400, seed: int = 1
) -> KillTally:
    """Kill `tideline import` of a fresh file `kills` times; re-run each import."""
    rng, tally, db = random.Random(seed), KillTally("tideline import"), _memory_db(env)
    done: dict[str, int] = {}

    def command(trial: int) -> tuple[list[str], str]:
        path, key = base / f"conv-{trial}.json", f"kill/import/{trial}"
        _conversation(path, trial, turns, rng)
        args = [str(BIN / "tideline"), "import", str(path), "--format", "openai", "--json"]
        return [*args, "--session", key], key

    args, key = command(-1)
    baseline = run(args, env).seconds
    done[key] = turns
    trial = -1
    while _more(tally, kills):
        trial += 1
        args, key = command(trial)
        first = run(args, env, _delay(rng, baseline))
        baseline = _rebased(baseline, first)
        found = {"killed": int(first.killed), "corrupt": int(not quick_check(db))}
        if found["corrupt"]:
            tally.record(**found)
            continue
        seen = _session_turns(db, key) if db.exists() else 0
        found["partial"] = int(seen not in (0, turns))
        rerun = run(args, env)
        found["rerun_failed"] = int(rerun.returncode != 0)
        done[key] = turns
        counts = {k: _session_turns(db, k) for k in done}
        found["lost"] = sum(max(0, done[k] - n) for k, n in counts.items())
        found["duplicated"] = sum(max(0, n - done[k]) for k, n in counts.items())
        found["missing_vectors"] = _missing_vectors(env)
        tally.record(**found)
    return tally


# -- tideline write ---------------------------------------------------------------------------
def _gestures(db: Path) -> dict[str, int]:
    rows = query(db, "SELECT gesture, count(*) FROM narratives GROUP BY gesture")
    return {str(g): int(n) for g, n in rows}  # type: ignore[call-overload]


def _write_args(gesture: str) -> list[str]:
    return [str(BIN / "tideline"), "write", gesture, "--tag", "kill", "--json"]


def kill_writes(base: Path, env: dict[str, str], kills: int, seed: int = 2) -> KillTally:
    """Kill `tideline write` `kills` times; the next (completed) write is the re-run."""
    rng, tally, db = random.Random(seed), KillTally("tideline write"), _memory_db(env)
    acked: set[str] = set()
    baseline = run(_write_args("kill write baseline"), env).seconds
    acked.add("kill write baseline")
    trial = -1
    while _more(tally, kills):
        trial += 1
        gesture = f"kill write {trial} " + " ".join(rng.choices(WORDS, k=6))
        first = run(_write_args(gesture), env, _delay(rng, baseline))
        baseline = _rebased(baseline, first)
        if first.acknowledged:
            acked.add(gesture)
        found = {"killed": int(first.killed), "corrupt": int(not quick_check(db))}
        if found["corrupt"]:
            tally.record(**found)
            continue
        rerun_gesture = f"kill write rerun {trial}"
        rerun = run(_write_args(rerun_gesture), env)
        found["rerun_failed"] = int(rerun.returncode != 0)
        if rerun.acknowledged:
            acked.add(rerun_gesture)
        counts = _gestures(db)
        found["lost"] = sum(1 for g in acked if counts.get(g, 0) == 0)
        found["duplicated"] = sum(1 for n in counts.values() if n > 1)
        found["missing_vectors"] = _missing_vectors(env)
        tally.record(**found)
    return tally


# -- memo index -------------------------------------------------------------------------------
@dataclass
class NoteLibrary:
    """A library of two collections whose notes carry one marker word for their current text."""

    root: Path
    rng: random.Random
    markers: dict[str, str] = field(default_factory=dict)
    serial: int = 0

    def create(self, notes: int) -> None:
        for name in ("alpha", "beta"):
            folder = self.root / name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "_meta.yaml").write_text(f"description: kill test collection {name}\n")
        for _ in range(notes):
            self.write(f"{self.rng.choice(('alpha', 'beta'))}/note-{self.serial}.md")

    def write(self, rel: str) -> None:
        self.serial += 1
        marker = f"mk{self.serial}x"
        words = " ".join(self.rng.choices(WORDS, k=40))
        body = "\n\n".join(f"## Part {i}\n\n{words} {i}" for i in range(3))
        (self.root / rel).write_text(f"# Note {rel}\n\n{marker} {words}\n\n{body}\n")
        self.markers[rel] = marker

    def mutate(self, share: float = 0.2) -> None:
        """Edit about `share` of the notes, delete a few, add a few."""
        rels = sorted(self.markers)
        for rel in self.rng.sample(rels, max(1, int(len(rels) * share))):
            self.write(rel)
        for rel in self.rng.sample(rels, max(1, len(rels) // 50)):
            (self.root / rel).unlink()
            del self.markers[rel]
        for _ in range(max(1, len(rels) // 50)):
            self.write(f"{self.rng.choice(('alpha', 'beta'))}/note-{self.serial}.md")

    def index_db(self, collection: str) -> Path:
        return self.root / collection / ".memo" / "index.db"


def _index_faults(lib: NoteLibrary, with_vectors: bool) -> dict[str, int]:
    """Lost, duplicated and vector-less chunks of the library's indexes after a re-run."""
    found = {"lost": 0, "duplicated": 0, "missing_vectors": 0}
    for name in ("alpha", "beta"):
        db = lib.index_db(name)
        rows = query(db, "SELECT path, text FROM chunks")
        texts: dict[str, str] = {}
        for path, text in rows:
            texts[str(path)] = texts.get(str(path), "") + f" {text}"
        for rel, marker in lib.markers.items():
            if rel.startswith(f"{name}/") and marker not in texts.get(rel, ""):
                found["lost"] += 1
        dupes = query(
            db, "SELECT count(*) FROM (SELECT 1 FROM chunks GROUP BY path, ord HAVING count(*) > 1)"
        )
        found["duplicated"] += int(dupes[0][0])  # type: ignore[call-overload]
        if with_vectors:
            pending = query(db, "SELECT count(*) FROM chunks WHERE embedded = 0")
            found["missing_vectors"] += int(pending[0][0])  # type: ignore[call-overload]
    return found


def kill_memo_index(
    base: Path, env: dict[str, str], kills: int, notes: int = 120, seed: int = 3
) -> KillTally:
    """Kill `memo index` `kills` times, editing a fifth of the notes before each; re-run each."""
    rng, tally = random.Random(seed), KillTally("memo index")
    lib = NoteLibrary(base / "library", rng)
    lib.create(notes)
    args = [str(BIN / "memo"), "index", "--root", str(lib.root), "--json"]
    run(args, env)
    lib.mutate()
    baseline = run(args, env).seconds
    with_vectors = env.get("TIDELINE_EMBEDDER", "none") != "none"
    while _more(tally, kills):
        lib.mutate()
        first = run(args, env, _delay(rng, baseline))
        baseline = _rebased(baseline, first)
        found = {"killed": int(first.killed)}
        found["corrupt"] = sum(int(not quick_check(lib.index_db(n))) for n in ("alpha", "beta"))
        rerun = run(args, env)
        found["rerun_failed"] = int(rerun.returncode != 0)
        if rerun.returncode == 0:
            found.update(_index_faults(lib, with_vectors))
        tally.record(**found)
    return tally


KILLERS: dict[str, Callable[[Path, dict[str, str], int], KillTally]] = {
    "memo index": kill_memo_index,
    "tideline import": kill_imports,
    "tideline write": kill_writes,
}
