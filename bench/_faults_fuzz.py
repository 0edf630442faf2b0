"""Random inputs through every query entry point and importer, in-process for volume.

A `TidelineError` is the right answer to bad input (a one-line message naming it); anything else
escaping the core API is a failure. The `none` embedder keeps each call to the lexical path; the
hypothesis tests in tests/ cover the same entry points with fewer, shrinkable examples.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _faults_report import Row
from typer.testing import CliRunner

from tideline.app import Tideline, library_from
from tideline.cli.main import app as tideline_cli
from tideline.cli.memo import app as memo_cli
from tideline.config import DEFAULTS, Settings
from tideline.errors import TidelineError
from tideline.search import parse_query

ALPHABETS = (
    "abcdefghijklmnopqrstuvwxyz0123456789 ",
    "\"*:^()-+{}[],;.'\\/ NEARANDORNOT",
    "\x00\x01\x07\t\n\r\x1b\x7f\x85\u2028\u2029",
    "".join(chr(c) for c in range(0xD800, 0xD810)) + "\udfff",
    "记忆检索中文日本語한국어",
    "😀🧠👩‍💻🏳️‍🌈",
    "\u0301\u0308\u200b\u200d\ufeff\u202e",
    "абвгдеёжзийклмнопрстуфхцчшщ",
    "[]/#@=: boldlink",  # terminal markup (rich tags): user text must print as typed
)
TIMES = (
    "0001-01-01T00:00:00+05:00",
    "9999-12-31T23:59:59-05:00",
    "2026-13-45",
    "yesterday",
    "",
    "2026-01-01",
)


def random_text(rng: random.Random) -> str:
    """A string mixing query syntax, control characters, lone surrogates and scripts."""
    length = rng.choice((1, 3, 8, 20, 60, 200)) if rng.random() < 0.98 else 5000
    pools = rng.sample(ALPHABETS, rng.randint(1, 3))
    return "".join(rng.choice(rng.choice(pools)) for _ in range(length))


class Failures:
    """Non-Tideline exceptions by type, with one example input each."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.examples: dict[str, str] = {}

    def call(self, fn: Callable[[], object], shown: str) -> None:
        try:
            fn()
        except TidelineError:
            pass
        except Exception as exc:
            name = type(exc).__name__
            self.kinds[name] += 1
            self.examples.setdefault(name, shown[:60])

    def row(self, test: str, trials: int) -> Row:
        total = sum(self.kinds.values())
        kinds = ", ".join(f"{n} {k}" for k, n in self.kinds.most_common(4))
        return Row(
            test,
            trials,
            total,
            f"{total} non-Tideline exceptions" + (f" ({kinds})" if kinds else ""),
        )


def _memory(base: Path) -> Tideline:
    settings = Settings.load(
        env={}, overrides={"home": str(base / "fuzz-home"), "embedder": "none"}
    )
    app = Tideline(settings)
    app.memory.write(gesture="a narrative about harbour lanterns", tags=["fuzz"])
    app.memory.sync_turn("fuzz", "user", "the ferry leaves at noon")
    return app


def fuzz_memory_search(base: Path, n: int, rng: random.Random) -> Row:
    """`Memory.search` with random queries, and now and then random time bounds and k."""
    failures, app = Failures(), _memory(base)
    try:
        for _ in range(n):
            q = random_text(rng)
            since = rng.choice(TIMES) if rng.random() < 0.05 else None
            k = rng.choice((10, 10, 10, 0, -1, 10**6))
            failures.call(
                lambda q=q, s=since, k=k: app.memory.search(q, k, since=s, include_turns=True), q
            )
    finally:
        app.close()
    return failures.row("fuzz: memory search", n)


def fuzz_library_search(base: Path, n: int, rng: random.Random) -> Row:
    """`Library.search` (lexical) with random queries."""
    root = base / "fuzz-lib" / "notes"
    root.mkdir(parents=True)
    (root / "_meta.yaml").write_text("description: fuzz notes\n")
    (root / "a.md").write_text("# Harbour\n\nlanterns and the ferry schedule\n")
    failures = Failures()
    with library_from(DEFAULTS, root.parent, None) as lib:
        lib.index()
        for _ in range(n):
            q = random_text(rng)
            failures.call(lambda q=q: lib.search(q, "*", mode="lex", catch_up=False), q)
    return failures.row("fuzz: library search", n)


def fuzz_query_parser(n: int, rng: random.Random) -> Row:
    failures = Failures()
    for _ in range(n):
        q = random_text(rng)
        failures.call(lambda q=q: parse_query(q), q)
    return failures.row("fuzz: query parser", n)


SAMPLES = {
    "openai": json.dumps(
        [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    ),
    "transcript": "\n".join(
        json.dumps(
            {
                "type": "user",
                "message": {"content": "hi"},
                "timestamp": "2026-01-01T00:00:00Z",
                "sessionId": "s",
            }
        )
        for _ in range(2)
    ),
    "locomo": json.dumps(
        {
            "sample_id": "x",
            "conversation": {
                "speaker_a": "A",
                "speaker_b": "B",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
            },
        }
    ),
}
JUNK = (
    "[" * 100_000,
    '"\udcff"',
    "5",
    "null",
    "{}",
    "[]",
    '{"session_1_date_time": 5}',
    "\xff",
    "\x00",
)


def malformed(sample: str, rng: random.Random) -> bytes:
    """A valid file cut, spliced, flipped or stuffed with hostile values."""
    data = sample.encode()
    roll = rng.random()
    if roll < 0.25:
        return data[: rng.randint(0, len(data))]
    if roll < 0.5:
        at = rng.randint(0, len(data))
        return data[:at] + rng.choice(JUNK).encode("utf-8", "surrogatepass") + data[at:]
    if roll < 0.75:
        raw = bytearray(data)
        for _ in range(rng.randint(1, 5)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        return bytes(raw)
    text = sample
    for value in ('"hi"', '"A"', '"user"', '"1:56 pm on 8 May, 2023"', '"D1:1"'):
        text = text.replace(value, rng.choice(("5", "null", "[]", "{}", '"\\udcff"', "-1e999")), 1)
    return text.encode()


def fuzz_imports(base: Path, n: int, rng: random.Random) -> Row:
    """`Memory.import_file` of `n` malformed files spread over the built-in formats."""
    failures, app, path = Failures(), _memory(base), base / "fuzz-import.json"
    try:
        for i in range(n):
            fmt = list(SAMPLES)[i % len(SAMPLES)]
            path.write_bytes(malformed(SAMPLES[fmt], rng))
            failures.call(lambda f=fmt: app.memory.import_file(path, f), fmt)
    finally:
        app.close()
    return failures.row("fuzz: import of malformed files", n)


def as_argv(text: str) -> str:
    """`text` as a process would get it in argv: UTF-8 bytes (lone surrogates as their bytes),
    no NUL, decoded back with `surrogateescape` the way Python decodes a command line."""
    raw = text.replace("\x00", "").encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "surrogateescape")


def fuzz_cli(base: Path, n: int, rng: random.Random) -> Row:
    """What a terminal shows, in-process through typer's runner (no --json): each string is
    echoed back by `memo search` with no results, shown as a note's heading and text by `memo
    search`, and written as a narrative that `tideline search` then lists; a traceback fails."""
    lib = base / "fuzz-cli-lib"
    for name in ("echo", "show"):
        (lib / name).mkdir(parents=True)
        (lib / name / "_meta.yaml").write_text(f"description: fuzz {name}\n")
    env = {
        "TIDELINE_HOME": str(base / "fuzz-cli-home"),
        "TIDELINE_EMBEDDER": "none",
        "MEMO_ROOT": str(lib),
        "AGENT_NAME": "fuzz",
    }
    runner, failures = CliRunner(), Failures()

    def invoke(app: Any, *args: str) -> None:
        result = runner.invoke(app, list(args), env=env)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception

    for i in range(n):
        text, marker = as_argv(random_text(rng)) or "x", f"mk{i}x"
        note = f"# {text}\n\n{marker} {text}\n".encode("utf-8", "surrogateescape")
        (lib / "show" / "note.md").write_bytes(note)
        failures.call(
            lambda t=text: invoke(memo_cli, "search", t, "-p", "echo", "--mode", "lex"), text
        )
        failures.call(
            lambda m=marker: invoke(memo_cli, "search", m, "-p", "show", "--mode", "lex"), text
        )
        failures.call(lambda t=f"{marker} {text[:400]}": invoke(tideline_cli, "write", t), text)
        failures.call(lambda m=marker: invoke(tideline_cli, "search", m, "-k", "1"), text)
    return failures.row("fuzz: CLI human output (memo search, tideline write + search)", n)


def fuzz_all(base: Path, n: int, imports: int, cli: int, seed: int = 9) -> list[Row]:
    rng = random.Random(seed)
    return [
        fuzz_query_parser(n, rng),
        fuzz_memory_search(base, n, rng),
        fuzz_library_search(base, n, rng),
        fuzz_imports(base, imports, rng),
        fuzz_cli(base, cli, rng),
    ]
