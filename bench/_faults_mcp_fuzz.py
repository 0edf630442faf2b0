"""Random arguments through every MCP tool, with the official SDK's client in memory.

Each call picks a tool and builds arguments from its own input schema: each property given or
left out, of the declared type most of the time and of another now and then, with the values a
hostile or confused client sends — ids past 2^63 (where SQLite's integers end), 0 and negatives,
huge and tiny numbers, control characters, lone surrogates, terminal markup, 5,000-character
strings, lists where a string goes, idempotency keys reused for other requests — plus synonyms and
unknown names. A tool error is the right answer to bad input; a failure is the server's crash
message ("… failed with an unexpected …"), an exception out of the client, or a call that never
returns. The agent database is made anew every `PER_AGENT` calls, so forgetting and writing
keep it small.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from _faults_fuzz import random_text
from _faults_report import Row
from mcp import Client

from tests.library.notes import make_collection
from tideline.app import Tideline
from tideline.config import Settings
from tideline.mcp import build_server

PER_AGENT = 5_000
CALL_DEADLINE = 60.0
#: Long or model-bound tools run now and then, not in a fifth of all calls.
RARE = {"sleep_run", "dream_run", "memo_reindex", "memory_scan_unindexed"}
INTS = (0, 1, 2, -1, 7, 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30)
FLOATS = (0.0, -0.0, 0.5, 1.0, -1.0, 1e308, -1e308, 5e-324, 2.0**63)
KEYS = ("k", "k2", "", " ", "x" * 201, "tab\tkey", "\x00", "\ud800", "🔑")


def _value(kind: str, rng: random.Random) -> Any:
    if kind == "integer":
        return rng.choice(INTS) if rng.random() < 0.7 else rng.randint(-5, 50)
    if kind == "number":
        return rng.choice(FLOATS + INTS)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [_any(rng) for _ in range(rng.choice((0, 1, 2, 5)))]
    if kind == "null":
        return None
    return random_text(rng)


def _any(rng: random.Random) -> Any:
    return _value(rng.choice(("integer", "number", "boolean", "string", "null", "array")), rng)


def _types(prop: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(type, its schema) of each variant of a property (anyOf / enum / items)."""
    found = []
    for v in prop.get("anyOf", [prop]):
        if "enum" in v:
            found.append(("enum", v))
        elif "const" in v:
            found.append(("enum", {"enum": [v["const"]]}))
        else:
            found.append((str(v.get("type", "string")), v))
    return found


def _argument(name: str, prop: dict[str, Any], rng: random.Random) -> Any:
    if name == "idempotency_key" and rng.random() < 0.8:
        return rng.choice(KEYS)
    if rng.random() < 0.15:
        return _any(rng)  # another type than declared
    kind, schema = rng.choice(_types(prop))
    if kind == "enum":
        return rng.choice([*schema["enum"], "bogus"]) if rng.random() < 0.9 else _any(rng)
    if kind == "array":
        item = str(schema.get("items", {}).get("type", "string"))
        return [_value(item, rng) for _ in range(rng.choice((0, 1, 2, 3, 40)))]
    return _value(kind, rng)


def arguments(schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Random arguments for one call of a tool with this input schema."""
    props: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    args = {
        name: _argument(name, prop, rng)
        for name, prop in props.items()
        if (name in required and rng.random() < 0.95) or rng.random() < 0.5
    }
    if rng.random() < 0.05:
        args[rng.choice(("bogus", "limit", "q", "id", "text", "reason"))] = _any(rng)
    return args


class Tally:
    """Calls, tool errors, and failures by kind with one example each."""

    def __init__(self) -> None:
        self.calls = 0
        self.tool_errors = 0
        self.kinds: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.tools: Counter[str] = Counter()

    def fail(self, kind: str, example: str) -> None:
        self.kinds[kind] += 1
        self.examples.setdefault(kind, example[:160])


async def _session(app: Tideline, calls: int, rng: random.Random, tally: Tally) -> None:
    async with Client(build_server(app), read_timeout_seconds=CALL_DEADLINE) as client:
        tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        names = sorted(tools)
        for _ in range(calls):
            name = rng.choice(names)
            if name in RARE and rng.random() < 0.9:
                name = rng.choice([n for n in names if n not in RARE])
            args = arguments(tools[name], rng)
            tally.calls += 1
            tally.tools[name] += 1
            try:
                with anyio.fail_after(CALL_DEADLINE):
                    result = await client.call_tool(name, args)
            except TimeoutError:
                tally.fail("no answer", f"{name} {args!r}")
                continue
            except Exception as exc:  # out of the client: the protocol broke
                tally.fail(type(exc).__name__, f"{name} {args!r}: {exc}")
                continue
            if result.is_error:
                tally.tool_errors += 1
                text = result.content[0].text if result.content else ""
                if "failed with an unexpected" in text:
                    tally.fail(text.split("unexpected ", 1)[1].split(";")[0], f"{name} {args!r}")


def _agent(base: Path, n: int) -> Tideline:
    home, root = base / f"mcp-fuzz-{n}", base / f"mcp-fuzz-lib-{n}"
    make_collection(root, "log", "A running log", {"day.md": "# Day\n\nharbour lanterns\n"})
    app = Tideline(
        Settings.load(
            env={}, overrides={"home": str(home), "embedder": "none", "memo_root": str(root)}
        )
    )
    turn = app.memory.sync_turn("fuzz", "user", "the ferry leaves at noon")
    app.memory.write(gesture="a narrative about harbour lanterns", source_links=[turn.id])
    return app


def fuzz_mcp(base: Path, n: int, seed: int = 21) -> Row:
    """`n` tool calls with random arguments, on a fresh agent every `PER_AGENT` calls."""
    rng, tally = random.Random(seed), Tally()
    logging.getLogger("mcp").setLevel(logging.WARNING)  # the SDK logs every refused call (INFO)
    for part, start in enumerate(range(0, n, PER_AGENT)):
        app = _agent(base, part)
        try:
            anyio.run(_session, app, min(PER_AGENT, n - start), rng, tally)
        finally:
            app.close()
    failed = sum(tally.kinds.values())
    kinds = "; ".join(
        f"{count} {kind} (e.g. {tally.examples[kind]})"
        for kind, count in tally.kinds.most_common(3)
    )
    return Row(
        "fuzz: MCP tool arguments (every tool; ids past 2^63, idempotency keys, wrong types)",
        tally.calls,
        failed,
        f"{failed} foreign exceptions over {len(tally.tools)} tools"
        + (f" ({kinds})" if kinds else "")
        + f"; {tally.tool_errors:,} calls refused with a one-line tool error",
    )
