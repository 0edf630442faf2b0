"""Peak memory of `tideline import` on a generated ChatGPT export of a chosen size.

Writes a `conversations.json` shaped like ChatGPT's (20 text messages a conversation, metadata
as the real export has it) in a temporary folder, imports it into a fresh home with no embedder
(what is measured is reading and storing, not embedding), and prints the file's size, the
import's peak resident memory, their ratio and the wall time.

    .venv/bin/python bench/import_peak.py [--mb 50]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = "the quick brown fox jumps over a lazy dog while we plan the trip to Kyoto in November"


def conversation(n: int) -> dict[str, object]:
    words = WORDS.split()
    mapping: dict[str, dict[str, object]] = {
        "root": {"id": "root", "message": None, "parent": None, "children": []}
    }
    parent = "root"
    for i in range(20):
        node = f"c{n}m{i}"
        text = " ".join(words[(n + i + j) % len(words)] for j in range(60))
        mapping[node] = {
            "id": node,
            "parent": parent,
            "children": [],
            "message": {
                "id": node,
                "author": {"role": "user" if i % 2 == 0 else "assistant", "metadata": {}},
                "create_time": 1_700_000_000 + n * 100 + i,
                "content": {"content_type": "text", "parts": [text]},
                "status": "finished_successfully",
                "metadata": {"model_slug": "gpt-4o", "finish_details": {"type": "stop"}},
                "recipient": "all",
            },
        }
        mapping[parent]["children"] = [node]
        parent = node
    return {
        "title": f"Conversation {n}",
        "create_time": 1_700_000_000 + n * 100,
        "mapping": mapping,
        "current_node": parent,
        "conversation_id": f"conv-{n}",
    }


def write_export(path: Path, size: int) -> int:
    """Conversations until the file holds `size` bytes; returns how many."""
    n = written = 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        while written < size:
            text = ("," if n else "") + json.dumps(conversation(n)) + "\n"
            written += fh.write(text)
            n += 1
        fh.write("]")
    return n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50, help="size of the export (MB)")
    args = parser.parse_args()
    tideline = Path(sys.executable).with_name("tideline")
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "conversations.json"
        conversations = write_export(export, int(args.mb * 1e6))
        env = {**os.environ, "TIDELINE_HOME": f"{tmp}/home", "TIDELINE_EMBEDDER": "none"}
        start = time.perf_counter()
        subprocess.run([tideline, "import", str(export)], env=env, check=True)
        seconds = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux
        size = export.stat().st_size
    print(f"{conversations} conversations, {size / 1e6:.1f} MB")
    print(f"peak RSS {peak / 1e6:.0f} MB = {peak / size:.2f}× the file, {seconds:.0f} s")


if __name__ == "__main__":
    main()
