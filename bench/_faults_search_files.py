"""The disposable search files beside memory.db, damaged (issue 31), and the write-ahead log's
frames, damaged.

*Search files.* A home whose turns have vectors (the loopback OpenAI-protocol stub) and whose
vector and lexical files are built (`TIDELINE_VECTOR_INDEX_MIN=0`). Each trial builds the files
afresh, damages one file of them (every file kind: `graph.usearch`, `vectors.f32`, `ids.npy`,
`meta.json`, each tantivy file and `<name>.state`; random, zeroed, shuffled or cut bytes:
tests/file_damage.py; several seeds) and asks, through a new `tideline search` process (CLI)
or a `tideline serve` that had the files open (REST), the search that file serves (vector for
the vector files, lexical for tantivy's). A failure is a crash (a signal, a dead server), an
answer that is not the exact search's (the same question with the files switched off), a
foreign exception (a traceback), no warning naming the damage (CLI), or doctor's check
(`damaged_search_files`, what `tideline doctor` runs) not reporting it.

*Log frames.* A copy of a healthy memory.db left with 60 acknowledged turns in its write-ahead
log (tests/damage.py `leave_wal`), one early frame overwritten with random bytes: the first
command (`tideline stats`) must refuse the file in one line naming the frame and how many
committed transactions after it SQLite would drop, and leave the log as it was.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import httpx
from _faults_report import Row

from tests import damage
from tests.file_damage import KINDS, lexical_files, vector_files
from tests.helpers import wait_until
from tests.kills import BIN, cli_env, run, stub_env
from tests.mcp.conftest import start_http, stop
from tests.openai_stub import OpenAIStub
from tideline.app import Tideline
from tideline.config import Settings
from tideline.memory import NARRATIVE_INDEX, TURN_INDEX
from tideline.search import damaged_search_files

TURNS = 120
WORDS = ["kayak", "violin", "garden", "harbour", "python", "paris", "marathon", "tomato"]
QUERIES = ("violin lessons", "the garden tomato", "kayak on the harbour")
EXACT = str(10**12)  # `vector_index_min` no index reaches: searched exactly, no files


def _kind_of(path: Path) -> str:
    """What a file is, for the tally: its name in a vector generation, its suffix in tantivy's."""
    if path.parent.parent.name.endswith(".vectors"):
        return f"vectors {path.name}"
    if path.name.endswith(".state"):
        return "lexical .state"
    return f"tantivy {path.suffix if path.suffix not in ('', '.json') else path.name}"


def _targets(db: Path) -> dict[str, tuple[str, Path]]:
    """One file of each kind of the turns' index: kind -> (search mode it serves, file)."""
    found: dict[str, tuple[str, Path]] = {}
    for p in vector_files(db):
        if p.parent.name.startswith(f"{TURN_INDEX}-"):
            found.setdefault(_kind_of(p), ("vec", p))
    for p in lexical_files(db):
        if p.name.startswith(TURN_INDEX) or p.parent.name.startswith(f"{TURN_INDEX}-"):
            found.setdefault(_kind_of(p), ("lex", p))
    return found


def _fill(env: dict[str, str]) -> Path:
    app = Tideline(Settings.load(env=env))
    try:
        for n in range(TURNS):
            w, v = WORDS[n % len(WORDS)], WORDS[(n * 3 + 1) % len(WORDS)]
            app.memory.sync_turn("s1", "user", f"turn {n}: a day of {w} and some {v}")
        app.memory.embed_pending()
    finally:
        app.close()
    return Path(env["TIDELINE_HOME"]) / "memory.db"


def _rebuild(env: dict[str, str], db: Path, *, fresh: bool = True) -> None:
    """Whole search files: (`fresh`) the old ones deleted first, then the missing built from the
    database (not `fresh` while a server runs: deleting a folder under its builder fails it)."""
    for suffix in (".vectors", ".lexical") if fresh else ():
        shutil.rmtree(db.with_name(db.name + suffix), ignore_errors=True)
    app = Tideline(Settings.load(env=env))
    try:
        app.memory.build_search_files()
    finally:
        app.close()


def _cli_ids(env: dict[str, str], query: str, mode: str) -> tuple[list[str] | None, str, int]:
    done = run([str(BIN / "tideline"), "search", query, "--mode", mode, "--json"], env)
    try:
        hits = json.loads(done.stdout)["hits"]
        return [f"{h['type']}:{h['id']}" for h in hits], done.stderr, done.returncode
    except (ValueError, KeyError, TypeError):
        return None, done.stderr, done.returncode


class _Tally:
    def __init__(self) -> None:
        self.trials = 0
        self.failed: dict[str, list[str]] = {}

    def fail(self, why: str, case: str) -> None:
        self.failed.setdefault(why, []).append(case)

    def row(self, test: str, kinds: int, held: str) -> Row:
        bad = {c for cases in self.failed.values() for c in cases}
        said = "; ".join(f"{why}: {', '.join(cases[:4])}" for why, cases in self.failed.items())
        figure = said or (
            f"{self.trials} damages over {kinds} file kinds × {len(KINDS)} kinds of damage: "
            f"0 crashes, 0 wrong answers, 0 foreign exceptions, {held}"
        )
        return Row(test, self.trials, len(bad), figure)


def _cases(db: Path, seeds: int) -> list[tuple[str, str, int]]:
    return [
        (kind, how, seed) for kind in sorted(_targets(db)) for how in KINDS for seed in range(seeds)
    ]


def through_cli(base: Path, stub: OpenAIStub, seeds: int) -> Row:
    env = stub_env(base, stub.url) | {"TIDELINE_VECTOR_INDEX_MIN": "0"}
    db = _fill(env)
    exact_env = env | {"TIDELINE_VECTOR_INDEX_MIN": EXACT}
    exact = {(q, m): _cli_ids(exact_env, q, m)[0] for q in QUERIES[:1] for m in ("vec", "lex")}
    tally, kinds = _Tally(), len(_targets(db))
    for kind, how, seed in _cases(db, seeds):
        _rebuild(env, db)
        mode, target = _targets(db)[kind]
        KINDS[how](target, seed * 7 + 5)
        case = f"{kind} {how} {seed}"
        tally.trials += 1
        if not damaged_search_files(db, (TURN_INDEX, NARRATIVE_INDEX)):
            tally.fail("not reported by doctor's check", case)
        ids, err, code = _cli_ids(env, QUERIES[0], mode)
        if code < 0:
            tally.fail(f"crashed (signal {-code})", case)
        elif "Traceback" in err:
            tally.fail("foreign exception", case)
        elif ids != exact[(QUERIES[0], mode)]:
            tally.fail("answer not the exact search's", case)
        elif err.count("until it is rebuilt") != 1:
            tally.fail("no single warning", case)
    return tally.row(
        "damaged search files: `tideline search` (CLI, a new process)",
        kinds,
        "each reported by doctor's check and said once by the search",
    )


def through_server(base: Path, stub: OpenAIStub, seeds: int) -> Row:
    env = stub_env(base, stub.url) | {"TIDELINE_VECTOR_INDEX_MIN": "0"}
    db = _fill(env)
    extra = {k: v for k, v in env.items() if k.startswith("TIDELINE_") and k != "TIDELINE_HOME"}
    reference = start_http(base, **(extra | {"TIDELINE_VECTOR_INDEX_MIN": EXACT}))
    server = start_http(base, **extra)
    tally, kinds = _Tally(), len(_targets(db))
    try:
        with httpx.Client(timeout=60) as client:

            def ids(url: str, query: str, mode: str) -> list[str] | None:
                got = client.get(f"{url}/api/search", params={"query": query, "mode": mode})
                if got.status_code != 200:
                    return None
                return [f"{h['type']}:{h['id']}" for h in got.json()["hits"]]

            base_url = server.url.removesuffix("/mcp")
            ref_url = reference.url.removesuffix("/mcp")
            exact = {(q, m): ids(ref_url, q, m) for q in QUERIES for m in ("vec", "lex")}
            for kind, how, seed in _cases(db, seeds):
                _rebuild(env, db, fresh=False)  # (or the server's own builder builds them)
                wait_until(
                    lambda k=kind: (
                        k in _targets(db) and not damaged_search_files(db, (TURN_INDEX,))
                    ),  # type: ignore[misc]
                    timeout=120,
                )
                mode, target = _targets(db)[kind]
                query = QUERIES[tally.trials % len(QUERIES)]
                ids(base_url, query, mode)  # the server has the new files open
                KINDS[how](target, seed * 7 + 5)
                case = f"{kind} {how} {seed}"
                tally.trials += 1
                got = [ids(base_url, query, mode) for _ in range(2)]
                if server.proc.poll() is not None:
                    tally.fail(f"server died ({server.proc.returncode})", case)
                    break
                if any(g != exact[(query, mode)] for g in got):
                    tally.fail("answer not the exact search's", case)
            if "Traceback" in server.stderr():
                tally.fail("foreign exception in the log", "server")
    finally:
        stop(server.proc)
        stop(reference.proc)
    return tally.row(
        "damaged search files: `tideline serve` REST (files open)",
        kinds,
        "the server up throughout, no traceback in its log",
    )


def log_frames(base: Path, trials: int) -> Row:
    """One early frame of a log holding 60 acknowledged turns, damaged: found at the first open."""
    env = cli_env(base / "template")
    template = _fill(env | {"TIDELINE_EMBEDDER": "none"})
    missed: list[str] = []
    for seed in range(trials):
        env = cli_env(base / f"wal-{seed}")
        path = Path(env["TIDELINE_HOME"]) / "memory.db"
        path.parent.mkdir(parents=True)
        shutil.copyfile(template, path)
        damage.leave_wal(path, rows=60)
        wal, size = Path(f"{path}-wal"), damage.page_size(path)
        rng = random.Random(seed)
        frame = rng.randrange(0, 10)
        with wal.open("r+b") as f:
            f.seek(32 + frame * (24 + size) + rng.choice((0, 24)))
            f.write(rng.randbytes(size // rng.choice((1, 4, 16))))
        before = hashlib.sha256(wal.read_bytes()).hexdigest()
        done = run([str(BIN / "tideline"), "stats"], env)
        lines = done.stderr.strip().splitlines()
        ok = (
            done.returncode == 3
            and len(lines) == 1
            and "fails its checksum" in lines[0]
            and "committed transactions" in lines[0]
            and hashlib.sha256(wal.read_bytes()).hexdigest() == before
        )
        if not ok:
            missed.append(f"seed {seed} frame {frame + 1}: exit {done.returncode}")
    figure = (
        "; ".join(missed[:5])
        or f"{trials} logs with one damaged early frame: each refused at the first command, "
        "naming the frame and the committed transactions after it, the log left as it was"
    )
    return Row(
        "damaged write-ahead log frame (60 acknowledged turns after it)",
        trials,
        len(missed),
        figure,
    )


def search_files(base: Path, seeds: int, frames: int) -> list[Row]:
    with OpenAIStub(dim=32) as stub:
        rows = [
            through_cli(base / "cli", stub, seeds),
            through_server(base / "rest", stub, max(1, seeds // 2)),
        ]
    return [*rows, log_frames(base / "wal", frames)]
