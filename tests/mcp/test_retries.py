"""Retrying a write over MCP after a lost answer: the same `idempotency_key` returns the first
answer (`replayed`) and stores nothing twice, for `memory_write`, `sync_turn` and `memo_write`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from tests.library.notes import make_collection
from tests.mcp.conftest import error_text, payload
from tideline.app import Tideline
from tideline.config import Settings
from tideline.mcp import build_server


def test_every_write_tool_takes_a_key_and_answers_a_retry_with_the_first_answer(
    tmp_path: Path,
) -> None:
    root = tmp_path / "lib"
    make_collection(root, "log", "A running log", {"day.md": "# Day\n"})
    app = Tideline(Settings.load(overrides={"embedder": "none", "memo_root": str(root)}))

    async def scenario() -> dict[str, Any]:
        async with Client(build_server(app)) as c:
            turn = {"session": "s", "role": "user", "text": "ok", "idempotency_key": "t"}
            first, again = [payload(await c.call_tool("sync_turn", turn)) for _ in range(2)]
            assert again == {**first, "created": False, "replayed": True}
            write = {"gesture": "fed the cat", "request_id": "w"}  # a synonym models use
            first, again = [payload(await c.call_tool("memory_write", write)) for _ in range(2)]
            assert again["id"] == first["id"] and again["replayed"] and not first["replayed"]
            other = {"gesture": "fed the dog", "idempotency_key": "w"}
            said = error_text(await c.call_tool("memory_write", other))
            assert "was used for another memory_write request" in said
            note = {"path": "log/day.md", "text": "- fed", "append": True, "idempotency_key": "n"}
            first, again = [payload(await c.call_tool("memo_write", note)) for _ in range(2)]
            assert again == {**first, "replayed": True}
            return dict(payload(await c.call_tool("memory_stats", {})))

    try:
        stats = anyio.run(scenario)
    finally:
        app.close()
    assert (stats["turns"], stats["narratives"]) == (1, 1)
    assert (root / "log" / "day.md").read_text().count("- fed") == 1
