"""Hostile envelopes (tests/integration/fuzz/hostile.py) through REST publish, batch
publish, ``notify --stdin`` and the SSE endpoint's parameters (issue 23): never a 500 or
a traceback, every refusal names what is wrong, and every notification accepted is in the
stream, whole and valid. The ZeroMQ and Socket.IO fuzzers draw from the same texts."""
import orjson
import pytest
import requests
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.services import of as of_app
from app.stream import envelope as rules
from app.stream.keys import STREAM
from app.users import accounts
from tests.integration.fuzz.conftest import TRIED
from tests.integration.fuzz.hostile import BODY_TEXT, ENVELOPE_TEXT, URLISH
from tests.support import LiveServer

FUZZ = settings(max_examples=300, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
ACCEPTED = []  # ids the fuzzed ingresses said they stored


@pytest.fixture(scope="module")
def herald(admin_app):
    app, token = admin_app
    return app, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


def refused_by_name(reply):
    """A 400 naming the field (``"field: rule"``), or a 413 naming the size limit (a text
    nested thousands deep, in lists, can pass 64 KiB)."""
    body = reply.get_json()
    assert reply.status_code in (400, 413), (reply.status_code, str(body)[:300])
    named = "64 KiB" if reply.status_code == 413 else ": "
    assert isinstance(body["error"], str) and named in body["error"], str(body)[:300]


def test_rest_publish(herald):
    app, headers = herald
    client = app.test_client()

    @given(text=BODY_TEXT)
    @FUZZ
    def fuzz(text):
        TRIED["REST publish (hostile JSON text)"] += 1
        reply = client.post("/api/notifications", data=text.encode("utf-8", "surrogatepass"),
                            headers=headers)
        if reply.status_code == 201:
            ACCEPTED.append(reply.get_json()["id"])
        else:
            refused_by_name(reply)
    fuzz()
    all_accepted_stored_whole(app)


def test_rest_batch_publish(herald):
    app, headers = herald
    client = app.test_client()

    @given(texts=st.lists(ENVELOPE_TEXT, min_size=1, max_size=4))
    @FUZZ
    def fuzz(texts):
        TRIED["REST batch publish (hostile JSON text)"] += 1
        body = '{"notifications":[' + ",".join(texts) + "]}"
        reply = client.post("/api/notifications/batch", data=body.encode("utf-8", "surrogatepass"),
                            headers=headers)
        if reply.status_code == 201:
            ACCEPTED.extend(n["id"] for n in reply.get_json()["notifications"])
        else:
            refused_by_name(reply)
    fuzz()
    all_accepted_stored_whole(app)


def test_notify_stdin(herald):
    app, _headers = herald
    runner = app.test_cli_runner()
    assert isinstance(runner, CliRunner)

    @given(texts=st.lists(BODY_TEXT.filter(lambda t: "\n" not in t and t.strip()), min_size=1,
                          max_size=3))
    @settings(FUZZ, max_examples=150)
    def fuzz(texts):
        TRIED["notify --stdin lines"] += len(texts)
        lines = [t.encode("utf-8", "surrogatepass") for t in texts]
        result = runner.invoke(args=["notify", "--stdin"], input=b"\n".join(lines) + b"\n")
        assert isinstance(result.exception, (SystemExit, type(None))), repr(result.exception)
        if result.exit_code == 0:
            ACCEPTED.extend(result.output.split())
        else:
            assert result.exit_code == 1 and "line " in result.output, result.output
            assert "Traceback" not in result.output
    fuzz()
    all_accepted_stored_whole(app)


def all_accepted_stored_whole(app):
    """Exactly what was answered as stored is in the stream, each entry valid."""
    entries = of_app(app).redis.xrange(STREAM)
    assert [entry_id.decode() for entry_id, _ in entries] == ACCEPTED
    for _entry_id, fields in entries:
        envelope = orjson.loads(fields[b"envelope"])
        clean = {k: v for k, v in envelope.items() if k != "ts"}
        assert rules.validate(clean) == clean


PARAM_VALUE = st.text(max_size=40) | URLISH | st.sampled_from([
    "0", "$", "18446744073709551615-18446744073709551615", "1-0", "-1", "1-", "a" * 3000,
    "\ud800", "%ff", "%00", "1700000000000-0"])


def test_sse_parameters(redis_server, tmp_path_factory):
    client = redis_server.client()
    accounts.create_user(client, "ann", "ann-password")
    server = LiveServer(redis_server.url, tmp_path_factory.mktemp("sse"))
    server.start()
    try:
        token = server.token("ann", "ann-password")

        @given(params=st.dictionaries(st.sampled_from(["last_id", "token", "topics", "x", "TOKEN"]),
                                      PARAM_VALUE, max_size=3),
               last_event_id=st.none() | PARAM_VALUE.filter(  # what an HTTP header can carry
                   lambda v: v == v.strip() and not any(c in v for c in "\r\n\x00")),
               bearer=st.booleans())
        @settings(FUZZ, max_examples=150)
        def fuzz(params, last_event_id, bearer):
            TRIED["SSE parameters"] += 1
            headers = {"Accept": "text/event-stream"}
            if bearer:
                headers["Authorization"] = f"Bearer {token}"
            if last_event_id is not None:
                headers["Last-Event-ID"] = last_event_id.encode("utf-8", "surrogatepass").decode(
                    "latin-1")
            query = {k: v.encode("utf-8", "surrogatepass") for k, v in params.items()}
            with requests.get(server.url + "/api/stream", params=query, headers=headers,
                              stream=True, timeout=10) as reply:
                assert reply.status_code in (200, 400, 401, 403, 414, 429, 503), reply.status_code
                if reply.status_code not in (200, 414):  # 414: the server's own, before Herald
                    assert reply.json()["error"]
        fuzz()
        log = server.log_path.read_text()
        assert "Traceback" not in log and '"level":"ERROR"' not in log, log[-3000:]
        assert server.process.poll() is None
    finally:
        server.stop()
        client.close()
