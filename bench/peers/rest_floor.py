"""The REST publish floor: the least a web process can do for ``POST /api/notifications``.

A bare gevent WSGI server (gevent.pywsgi, no Flask, no middleware) with one
endpoint that does what a REST publish cannot go without, the way Herald does
it, and nothing else:

- the API key: ``Authorization: Bearer hk_...``, its SHA-256, the name stored
  under that digest (a Redis GET the first time; after that the name is
  remembered and the publish script checks it, in its atomic step, as Herald's
  app/web/auth/api_keys.py does: a revoked key is refused by the next publish);
- the API key's rate limit, one fixed-window counter raised by the same script
  (RATELIMIT_API_KEY's first limit, as app/web/publish_quota.py counts it);
- the body: JSON, an object with a string ``topic`` and ``title`` (no more
  validation than that), stamped with ``ts`` and encoded;
- Herald's own publish script (app/stream/publish_scripts.PUBLISH) with the keys and
  arguments Herald's Bus gives it for one notification in shard 0 (one round trip);
- 201 with ``{"id", "ts"}``.

So Redis does the same work for a publish here as for Herald's; what differs is
the web process's own work (bench/rest_publish.py measures both in one run).

    REDIS_URL=redis://127.0.0.1:6379 PORT=5102 python bench/peers/rest_floor.py

Prints ``listening`` on stdout once it accepts connections.
"""
from gevent import monkey

monkey.patch_all()

import hashlib  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import orjson  # noqa: E402
import redis  # noqa: E402
from gevent import pywsgi  # noqa: E402
from one_send import OneSend  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the project, for its script and keys

from app.stream.keys import QUOTA  # noqa: E402
from app.stream.publish_scripts import PUBLISH  # noqa: E402
from app.stream.shards import Shard  # noqa: E402
from app.users.accounts import API_KEY_PREFIX, api_key_record  # noqa: E402

SHARD = Shard(0, 1)
HISTORY_MAX = 100_000
IDEMPOTENCY_TTL = 24 * 3600
LIMIT, WINDOW = 100_000, 1  # bench/rest_publish.py runs Herald with "100000 per second"

client = redis.Redis.from_url(os.environ["REDIS_URL"])
script = client.register_script(PUBLISH)
known = {}  # SHA-256 of an API key seen valid -> its name


def answer(start_response, status, body):
    start_response(status, [("Content-Type", "application/json"),
                            ("Content-Length", str(len(body)))])
    return [body]


def refuse(start_response, status, error):
    return answer(start_response, status, orjson.dumps({"error": error}))


def app(environ, start_response):
    if environ["PATH_INFO"] != "/api/notifications" or environ["REQUEST_METHOD"] != "POST":
        return refuse(start_response, "404 Not Found", "not found")
    scheme, _, key = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "bearer" or not key.startswith(API_KEY_PREFIX):
        return refuse(start_response, "401 Unauthorized", "API key is not valid")
    digest = hashlib.sha256(key.encode()).hexdigest()
    record = api_key_record(digest)
    name = known.get(digest)
    if name is None:
        stored = client.get(record)
        if stored is None:
            return refuse(start_response, "401 Unauthorized", "API key is not valid")
        name = known[digest] = stored.decode()
    length = int(environ.get("CONTENT_LENGTH") or 0)
    try:
        body = orjson.loads(environ["wsgi.input"].read(length))
    except orjson.JSONDecodeError:
        return refuse(start_response, "400 Bad Request", "body: is not valid JSON")
    if not isinstance(body, dict) or not isinstance(body.get("topic"), str) \
            or not isinstance(body.get("title"), str):
        return refuse(start_response, "400 Bad Request", "topic and title: strings required")
    now = time.time()
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
    raw = orjson.dumps({"topic": body["topic"], "title": body["title"], "severity": "info",
                        "ts": ts})
    quota_key = f"{QUOTA}publish:floor:{name}:{LIMIT}/{WINDOW}/second"
    keys = [SHARD.stream, SHARD.epoch, SHARD.last_id, record, quota_key]
    args = ["PUBLISH", SHARD.suffix, SHARD.live, HISTORY_MAX, IDEMPOTENCY_TTL, "", name, 0, 4, 1,
            LIMIT, WINDOW, raw, body["topic"], "", ts]
    written, value = script(keys=keys, args=args)
    if written == -1:
        known.pop(digest, None)
        return refuse(start_response, "401 Unauthorized", "API key is not valid")
    if written == -2:
        return refuse(start_response, "429 Too Many Requests", "rate limit exceeded")
    entry_id, stamped = value.decode().split(" ")
    return answer(start_response, "201 Created", orjson.dumps({"id": entry_id, "ts": stamped}))


class Handler(OneSend, pywsgi.WSGIHandler):
    """pywsgi's, Nagle off and a small answer in one send, as Herald's (one_send.py)."""


def main():
    server = pywsgi.WSGIServer(("127.0.0.1", int(os.environ["PORT"])), app, log=None,
                               handler_class=Handler)
    server.start()
    print("listening", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
