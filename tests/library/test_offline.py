"""Everything works with no network: indexing, embedding and search in a network namespace
with no interfaces (`unshare -rn`), and with sockets refused inside Python as a second guard."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.library.corpus import build

GUARD = """
import socket, sys
def refuse(*a, **k):
    raise OSError("network disabled for this test")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from tideline.cli.memo import app
sys.argv = ["memo", *sys.argv[1:]]
app()
"""


def _no_network_prefix() -> list[str]:
    if shutil.which("unshare"):
        probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True)
        if probe.returncode == 0:
            return ["unshare", "-rn"]
    return []  # the socket guard alone


def test_index_and_search_without_network(lib_root: Path, tmp_path: Path) -> None:
    build(lib_root)
    env = {
        **os.environ,
        "MEMO_ROOT": str(lib_root),
        "TIDELINE_HOME": str(tmp_path / "home"),
        "OMP_NUM_THREADS": "1",
    }
    prefix = _no_network_prefix()
    if prefix:  # prove the namespace really has no route out
        out = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-c",
                "import socket; socket.create_connection(('1.1.1.1', 53), 2)",
            ],
            capture_output=True,
        )
        assert out.returncode != 0
    run = [*prefix, sys.executable, "-c", GUARD]
    done = subprocess.run([*run, "index", "--json"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert all(c["embedded"] > 0 for c in json.loads(done.stdout)["collections"])
    found = subprocess.run(
        [*run, "search", "как восстановить базу данных", "--json", "--k", "3"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert any(h["heading"].endswith("Restoring the Postgres database") for h in hits)
    if not prefix:
        pytest.skip("unshare unavailable: checked with the in-process socket guard only")
