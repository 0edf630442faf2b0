"""Give an agent database made before `N_terms` its term table: re-analyse the turns' and the
narratives' text indexes (`TextIndex.reanalyse`), then rebuild both lexical files, each timed.

Used on the 1M bench home (docs/benchmarks-history.md, "The same 1M home with `N_terms`"): an index made
before `N_terms` keeps counting BM25's terms by FTS5's walk until it is re-analysed.

    .venv/bin/python bench/nterms_upgrade.py /work/cache/scale-1m/home/memory.db
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from tideline.clock import system_clock
from tideline.memory import AGENT_MIGRATIONS, RawContext
from tideline.memory._narratives import Narratives
from tideline.store import open_database


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db", type=Path, help="the agent database (memory.db)")
    path = ap.parse_args().db
    db = open_database(path, AGENT_MIGRATIONS)
    raw, narr = RawContext(db, clock=system_clock), Narratives(db, clock=system_clock)
    owners = (
        ("turns", raw.index, lambda: raw.lexical_keys(raw.ids()).items()),
        ("narratives", narr.index, lambda: narr.text_rows(narr.ids())),
    )
    for name, index, items in owners:
        index.configure(replace(index.options, file_min=0))
        began = time.perf_counter()
        done = index.reanalyse(items()) if not index.terms else 0
        print(f"{name}: {done:,} re-analysed in {time.perf_counter() - began:.0f} s", flush=True)
        began = time.perf_counter()
        built = index.build_lexical_file()
        print(f"{name}: lexical file built {built} in {time.perf_counter() - began:.0f} s")
    db.close()
    print(f"memory.db: {path.stat().st_size / 2**20:,.0f} MB")


if __name__ == "__main__":
    main()
