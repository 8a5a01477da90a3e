"""Hostile JSON bodies on every endpoint that reads one: each is a 400 naming what is wrong,
never a 500, and nothing is stored (issue 23: a lone surrogate, data nested 5,000 deep and an
unclosed IPv6 URL each gave a 500)."""
import pytest

from app.stream.keys import STREAM
from tests.unit.web.api.helpers import bearer

DEEP = '{"d":' * 5000 + "1" + "}" * 5000
BODIES = {
    "lone surrogate": '{"topic": "z.b", "title": "\\ud800"}',
    "lone low surrogate in a key": '{"topic": "z.b", "title": "x", "data": {"\\udc00": 1}}',
    "nested 5,000 deep": '{"topic": "z.b", "title": "x", "data": ' + DEEP + "}",
    "a bare deep array": "[" * 5000 + "]" * 5000,
    "unclosed IPv6 url": '{"topic": "z.b", "title": "x", "url": "http://[::1"}',
    "NaN": '{"topic": "z.b", "title": "x", "data": {"n": NaN}}',
    "an integer past 64 bits": '{"topic": "z.b", "title": "x", "data": {"n": 1' + "0" * 30 + "}}",
}
ENDPOINTS = [
    ("post", "/api/notifications"),
    ("post", "/api/notifications/batch"),
    ("post", "/api/read-state"),
    ("post", "/api/notification-state"),
    ("put", "/api/preferences"),
    ("post", "/api/digests"),
    ("post", "/api/webhooks"),
    ("post", "/auth/token"),
]


@pytest.mark.parametrize("method,path", ENDPOINTS)
@pytest.mark.parametrize("name", list(BODIES))
def test_hostile_json_is_a_400_naming_the_fault(client, redis, admin, method, path, name):
    body = BODIES[name]
    if path.endswith("/batch"):
        body = "[" + body + "]"
    reply = getattr(client, method)(path, data=body, content_type="application/json",
                                    headers=bearer(admin[0]))
    if path == "/auth/token" and name == "unclosed IPv6 url":  # good JSON, no credentials
        assert reply.status_code == 401
        return
    assert reply.status_code == 400, (reply.status_code, reply.get_data(as_text=True)[:300])
    assert reply.get_json()["error"]
    if name not in ("unclosed IPv6 url", "lone surrogate"):  # refused as JSON, before any view
        assert reply.get_json()["field"] == "body"
    assert redis.xlen(STREAM) == 0


def test_a_surrogate_pair_is_one_character_and_kept(client, redis, admin):
    reply = client.post("/api/notifications", headers=bearer(admin[0]),
                        data='{"topic": "z.b", "title": "\\ud83d\\ude00 done"}',
                        content_type="application/json")
    assert reply.status_code == 201
    [(_, fields)] = redis.xrange(STREAM)
    assert "\U0001F600 done".encode() in fields[b"envelope"]
