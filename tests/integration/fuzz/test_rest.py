"""The REST API fuzzed from its own OpenAPI description (schemathesis + hypothesis).

Every operation in app/web/api/openapi.json gets generated requests, both ones
the description allows and ones it does not, as an admin (who may do
everything): never a 500, and every answer as the description says
(status codes, content type, body schema). Then nothing is half-written:
each 201 from publishing is exactly one stream entry (a repeat under the
same Idempotency-Key answers the first one's id and writes nothing), and
every entry is a whole, valid notification: each operation's test checks that
right after its own fuzzing.
"""
import json

import orjson
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from app.services import of as of_app
from app.stream import envelope as rules
from app.stream.keys import STREAM
from tests import support
from tests.integration.fuzz.conftest import TRIED

DESCRIPTION = support.ROOT / "app" / "web" / "api" / "openapi.json"
# /healthz and /readyz take no input (and /readyz is 503 by design here: this
# in-process app runs no relay); they are tested in tests/integration/ops. /api/stream
# answers an endless event stream: tests/integration/realtime/test_sse.py drives it.
# POST /api/spark/rollup starts a real Spark job each time: tests/integration/spark drives it.
OPERATIONS = [(method.upper(), path)
              for path, item in json.loads(DESCRIPTION.read_text())["paths"].items()
              for method in item if method in ("get", "post", "patch", "delete")
              and path not in ("/healthz", "/readyz", "/api/stream")
              and (method, path) != ("post", "/api/spark/rollup")]
EXAMPLES = 150  # per operation
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
PUBLISHED = []  # ids answered with 201


@pytest.fixture(scope="module")
def fuzzed(admin_app):
    app, token = admin_app
    return app, schemathesis.openapi.from_wsgi("/api/openapi.json", app), token


@pytest.mark.parametrize("method, path", OPERATIONS)
def test_operation_never_fails_and_answers_as_described(fuzzed, method, path):
    _app, schema, token = fuzzed
    [operation] = [result.ok() for result in schema.get_all_operations()
                   if result.ok().method.upper() == method and result.ok().path == path]
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                      operation.as_strategy(GenerationMode.NEGATIVE))

    @given(case=cases)
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def fuzz(case):
        response = case.call(headers={"Authorization": f"Bearer {token}"})
        TRIED[f"REST {method} {path}"] += 1
        case.validate_response(response, checks=CHECKS)
        if method == "POST" and path.startswith("/api/notifications") and response.status_code == 201:
            body = response.json()
            ids = [n["id"] for n in body["notifications"]] if "notifications" in body else [body["id"]]
            # schemathesis: lower-case header names, a list of values each
            if response.headers.get("idempotent-replayed") == ["true"]:
                assert set(ids) <= set(PUBLISHED)  # a repeat: the first one's answer
            else:
                PUBLISHED.extend(ids)

    fuzz()
    nothing_half_written(_app)


def nothing_half_written(app):
    """The stream holds exactly what was answered 201 (a repeat under the same
    Idempotency-Key once), and every entry is a whole, valid notification."""
    entries = of_app(app).redis.xrange(STREAM)
    assert [entry_id.decode() for entry_id, _ in entries] == PUBLISHED
    for _entry_id, fields in entries:
        envelope = orjson.loads(fields[b"envelope"])
        clean = {k: v for k, v in envelope.items() if k != "ts"}
        assert rules.validate(clean) == clean
        assert fields[b"topic"].decode() == envelope["topic"]
