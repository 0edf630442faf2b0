"""One writer process of the concurrency test: an agent's `sync_turn`s on a shared PostgreSQL.

Usage: python tests/store/pg_writer.py URL AGENT WORKER COMMON OWN
Writes the COMMON turns every worker writes (the same words, time and id: one row in the end)
and OWN turns of its own, interleaved, into one session; prints how many it created.
"""

from __future__ import annotations

import sys

from tideline.app import Tideline
from tideline.config import Settings


def main(url: str, agent: str, worker: int, common: int, own: int) -> None:
    settings = Settings.load(
        overrides={"database_url": url, "agent_name": agent, "embedder": "none"}
    )
    app = Tideline(settings)
    created = 0
    try:
        for i in range(max(common, own)):
            if i < common:
                stamp = f"2026-11-01T09:{i // 60:02d}:{i % 60:02d}Z"
                created += app.memory.sync_turn(
                    "shared", "user", f"common turn {i}", timestamp=stamp
                ).created
            if i < own:
                created += app.memory.sync_turn(
                    "shared", "assistant", f"worker {worker} says {i}", external_id=f"w{worker}-{i}"
                ).created
    finally:
        app.close()
    print(created)


if __name__ == "__main__":
    url, agent, worker, common, own = sys.argv[1:]
    main(url, agent, int(worker), int(common), int(own))
