"""PostgreSQL going away under a request in flight (issue 31): a 503 with one line naming the
server and what to do, no traceback in the log, and the next request answered on a new
connection."""

from __future__ import annotations

import logging

import psycopg
import pytest

from tests.web.conftest import client_for
from tideline.app import Tideline
from tideline.config import Settings

NAME = "tideline-gone-test"


def test_a_server_gone_mid_request_is_a_one_line_503(
    pg_url: str,
    isolated_home: object,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("TIDELINE_DATABASE_URL", f"{pg_url}&application_name={NAME}")
    monkeypatch.setenv("TIDELINE_DATABASE_USER", "gone")
    app = Tideline(Settings.load(overrides={"embedder": "none"}))
    try:
        app.memory.sync_turn("s1", "user", "the picnic by the river")
        with client_for(app) as client:
            assert client.get("/api/search", params={"query": "picnic"}).status_code == 200
            with psycopg.connect(pg_url, autocommit=True) as admin:  # the server ends them
                ended = admin.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE application_name = %s",
                    (NAME,),
                ).fetchone()
            assert ended is not None and ended[0] >= 1
            caplog.clear()
            with caplog.at_level(logging.ERROR):
                gone = client.get("/api/search", params={"query": "picnic"})
            assert gone.status_code == 503, gone.text
            said = gone.json()["error"]
            assert said.startswith("lost the connection to PostgreSQL") and "retry" in said
            assert "\n" not in said and not [r for r in caplog.records if r.exc_info]
            assert client.get("/api/search", params={"query": "picnic"}).status_code == 200
    finally:
        app.close()
