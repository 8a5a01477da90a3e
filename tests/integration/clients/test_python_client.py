"""The Python client (clients/python, ``herald_client``) against a live Herald."""
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest
from flask import Flask, render_template_string

from app.stream.keys import ONCE, STREAM
from app.users import accounts, subscriptions
from app.web.auth.host_tokens import HostTokens
from herald_client import (
    HeraldClient,
    InvalidNotification,
    NotAuthorized,
    TokenSigner,
    Unavailable,
    retry_policy,
)
from herald_client.flask import Herald
from tests.helpers.keys import SECRET, ec_pair
from tests.redis_cluster import every_key
from tests.support import ROOT, Listener, LiveServer, RedisServer, free_port, refusal

PACKAGE = ROOT / "clients" / "python" / "herald_client"


def test_it_is_installed_as_a_package_of_its_own_without_heralds_code(tmp_path):
    probe = ("import sys, herald_client, herald_client.flask; "
             "print(herald_client.__file__); print(sorted(m for m in sys.modules "
             "if m == 'app' or m.startswith(('app.', 'workers'))))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, text=True,
                         capture_output=True, check=True).stdout.splitlines()
    assert "site-packages" in out[0], out  # pip install ./clients/python, not this checkout
    assert out[1] == "[]"
    for source in PACKAGE.glob("*.py"):
        text = source.read_text()
        assert "from app" not in text and "import app" not in text, source


@pytest.fixture
def herald(live_server, redis):
    key = accounts.create_api_key(redis, "host-app")
    with HeraldClient(live_server.url, key, retry=retry_policy(retries=2, backoff=0.05)) as client:
        yield client


def test_publish_and_publish_many(herald, redis):
    one = herald.publish("board.card.created", "Card added", data={"id": 1, "version": 1})
    many = herald.publish_many([{"topic": "board.card.updated", "title": f"edit {i}"}
                                for i in range(3)])
    stored = [entry_id.decode() for entry_id, _ in redis.xrange(STREAM)]
    assert stored == [one["id"]] + [n["id"] for n in many]
    # Each call carried an Idempotency-Key of its own.
    assert len(every_key(redis, ONCE + "*")) == 2


def test_refusals_are_typed_and_name_the_field(herald, live_server):
    with pytest.raises(InvalidNotification, match="topic: must be dot-separated") as refused:
        herald.publish("Not A Topic", "x")
    assert refused.value.field == "topic" and refused.value.status == 400
    with pytest.raises(InvalidNotification) as batch:
        herald.publish_many([{"topic": "ok", "title": "x"}, {"topic": "ok", "title": ""}])
    assert batch.value.field == "notifications[1].title"
    with pytest.raises(NotAuthorized, match="API key is not valid"):
        HeraldClient(live_server.url, "hk_wrong").publish("ok", "x")
    with pytest.raises(Unavailable, match="did not confirm"):
        HeraldClient(f"http://127.0.0.1:{_closed_port()}", "hk_x",
                     retry=retry_policy(retries=1, backoff=0.01)).publish("ok", "x")


def _closed_port():
    return free_port()


class AnswerLosingProxy:
    """A loopback TCP proxy in front of Herald that passes the first publish on
    and then hangs up instead of returning Herald's answer: the publish is
    stored, the client hears nothing. Everything else passes through."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lost = 0
        self.threads = []
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(client,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _serve(self, client):
        with client, socket.create_connection(("127.0.0.1", self.upstream_port)) as upstream:
            client.settimeout(10)
            upstream.settimeout(10)
            request = _whole_request(client)
            upstream.sendall(request)
            if b"POST /api/notifications" in request and not self.lost:
                self.lost += 1
                upstream.recv(65536)  # Herald answered: it stored the publish
                return  # and the answer never reaches the client
            back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
            back.start()
            _pump(client, upstream)
            back.join(10)

    def close(self):
        self.listener.close()
        for thread in self.threads:
            thread.join(5)


def _whole_request(sock):
    """One HTTP request's head and its Content-Length body, however many reads they
    take: urllib3 may send the body apart from the head, and a proxy that passed on
    the first read alone left Herald waiting for the rest (a flaky test)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    length = int(match.group(1)) if match else 0
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def _pump(source, sink):
    """Copy bytes from ``source`` to ``sink`` until either end closes."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def test_a_lost_answer_is_retried_under_the_same_key_and_stored_once(live_server, redis):
    key = accounts.create_api_key(redis, "host-app")
    proxy = AnswerLosingProxy(live_server.port)
    try:
        client = HeraldClient(f"http://127.0.0.1:{proxy.port}", key,
                              retry=retry_policy(retries=3, backoff=0.05))
        answer = client.publish("board.card.updated", "exactly once")
        client.close()
    finally:
        proxy.close()
    assert proxy.lost == 1
    entries = redis.xrange(STREAM)
    assert [entry_id.decode() for entry_id, _ in entries] == [answer["id"]]


def test_a_publish_during_a_redis_restart_is_retried_and_stored_once(tmp_path):
    redis_server = RedisServer(tmp_path)
    redis_server.start()
    redis = redis_server.client()
    server = LiveServer(redis_server.url, tmp_path)
    server.start()
    try:
        key = accounts.create_api_key(redis, "host-app")
        client = HeraldClient(server.url, key, retry=retry_policy(retries=10, backoff=0.2))
        redis_server.kill()
        result = {}
        publisher = threading.Thread(target=lambda: result.update(
            client.publish("board.card.updated", "across a restart")))
        publisher.start()
        time.sleep(1.5)  # the publish is being refused (503) and retried meanwhile
        assert publisher.is_alive()
        redis_server.start()
        publisher.join(30)
        assert result.get("id"), "the publish was not confirmed after Redis came back"
        titles = [json.loads(fields[b"envelope"])["title"] for _, fields in redis.xrange(STREAM)]
        assert titles == ["across a restart"]
        client.close()
    finally:
        server.stop()
        redis.close()
        redis_server.stop()


@pytest.fixture
def jwt_server(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, JWT_SECRET=SECRET)
    server.start()
    yield server
    server.stop()


def test_minted_tokens_are_accepted_by_herald(jwt_server, redis):
    subscriptions.add(redis, "carol", ["board"], limit=10)
    client = HeraldClient(jwt_server.url, jwt_secret=SECRET)
    listener = Listener(jwt_server, client.connection_token("carol", ttl=60, topics=["board"]))
    try:
        assert listener.call("subscribe", {"topics": ["ops"]})["ok"] is False
        assert listener.call("subscribe", {"topics": ["board.7"]})["ok"] is True
    finally:
        listener.close()
    expired = client.connection_token("carol", ttl=-60)
    assert refusal(jwt_server, {"token": expired}) == "unauthorized: token has expired"


def test_an_ec_key_signs_es256_tokens(tmp_path):
    private, public = ec_pair()
    path = tmp_path / "ec.pem"
    path.write_bytes(public)
    token = TokenSigner(private).token("dan", ttl=60)
    assert HostTokens(public_key_path=str(path)).verify(token).name == "dan"
    # a primary key, as an int: its digits are the sub
    assert HostTokens(public_key_path=str(path)).verify(TokenSigner(private).token(42)).name == "42"
    with pytest.raises(ValueError, match="1-255 characters"):
        TokenSigner(private).token("x" * 256)
    with pytest.raises(ValueError, match="at least 32 bytes"):
        TokenSigner("short")


@pytest.fixture
def host_app(tmp_path):
    app = Flask("host", instance_path=str(tmp_path))
    app.config.update(HERALD_URL="http://herald.example:5000", HERALD_JWT_SECRET=SECRET,
                      HERALD_TOPICS=["board"], SECRET_KEY="host")
    extension = Herald(app)
    signed_in = {"user": None}
    extension.user_loader(lambda: signed_in["user"])
    return app, signed_in


def test_the_flask_extension_mints_and_renews_tokens_for_the_signed_in_user(host_app):
    app, signed_in = host_app
    client = app.test_client()
    refused = client.get("/herald/token")
    assert refused.status_code == 401 and refused.headers["Cache-Control"] == "no-store"
    signed_in["user"] = "carol"
    reply = client.get("/herald/token")
    assert reply.status_code == 200 and reply.get_json()["expires_in"] == 600
    user = HostTokens(SECRET).verify(reply.get_json()["token"])
    assert (user.name, user.topics) == ("carol", ["board"])
    assert 590 <= user.expires - time.time() <= 600  # the token's exp, as minted


def test_the_template_helper_renders_what_a_page_needs_to_connect(host_app):
    app, signed_in = host_app
    signed_in["user"] = "carol"
    with app.test_request_context("/"):
        html = render_template_string("{{ herald_scripts() }}")
    # socket.io-client preloaded from Herald, never a blocking tag (a Herald that does not
    # answer must not hold the page): herald.js adds its script itself
    assert '<link rel="preload" href="http://herald.example:5000/client/socket.io.js" as="script">' \
        in html and 'socket.io.js"></script>' not in html
    # herald.js from the host app itself (there even while Herald is away), as shipped
    assert '<script src="/herald/herald.js"></script>' in html
    with app.test_client().get("/herald/herald.js") as served:
        assert served.status_code == 200 and served.mimetype == "text/javascript"
        assert served.data == (ROOT / "clients" / "js" / "herald.js").read_bytes()
    settings = json.loads(html.split('id="herald-connect">', 1)[1].split("</script>", 1)[0])
    assert settings["url"] == "http://herald.example:5000" and settings["tokenUrl"] == "/herald/token"
    assert settings["user"] == "carol"
    assert HostTokens(SECRET).verify(settings["token"]).name == "carol"


def test_nothing_in_the_settings_block_can_close_its_script_element(host_app):
    app, signed_in = host_app
    signed_in["user"] = "carol</script><script>alert(1)</script>"
    with app.test_request_context("/"):
        html = render_template_string("{{ herald_scripts() }}")
    assert html.count("</script>") == 2  # herald.js's tag and the settings block's
    settings = json.loads(html.split('id="herald-connect">', 1)[1].split("</script>", 1)[0])
    assert settings["user"] == signed_in["user"]
