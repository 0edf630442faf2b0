"""Schemathesis over the API's OpenAPI schema: generated input, valid and invalid, never makes a
500, and answers match their schema. The runs are left out (each generated call would start a background run);
tests/web/test_api.py covers them."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error, response_schema_conformance

from tests.web.conftest import seed
from tideline.app import Tideline
from tideline.config import Settings
from tideline.web import web_app


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.BaseSchema]:
    home = tmp_path_factory.mktemp("schema-home")
    app = Tideline(Settings.load(overrides={"home": str(home / "agent"), "embedder": "none"}))
    seed(app)
    # The routes without the guard: Host checks would refuse the generated "testserver" host
    # (tests/web/test_security.py tests the guard).
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", web_app(app))
    yield schema.exclude(path_regex="^/api/(sleep|dream)$")
    app.close()


def test_generated_requests_never_crash_the_api(api_schema: schemathesis.BaseSchema) -> None:
    checked = []
    operations = [found.ok() for found in api_schema.get_all_operations()]
    for operation, mode in product(operations, schemathesis.GenerationMode):

        @given(case=operation.as_strategy(mode))
        @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
        def probe(case: schemathesis.Case) -> None:
            response = case.call()
            case.validate_response(
                response, checks=[not_a_server_error, response_schema_conformance]
            )

        try:
            probe()
        except Unsatisfiable:  # no parameter to break: nothing invalid to send
            assert mode is schemathesis.GenerationMode.NEGATIVE, operation.label
            continue
        checked.append(operation.label)
    assert len(set(checked)) >= 20, checked  # every route but the runs, valid and invalid input
