"""One webhook POST (app/webhooks/post.py) against real loopback servers: the whole attempt
has one deadline, WEBHOOK_TIMEOUT, however the receiver dribbles its answer."""
import socket
import threading
import time

import pytest

from app.webhooks import post, store
from app.webhooks.sender import Sender
from app.webhooks.settings import Settings


class Trickler:
    """A TCP server on loopback that reads a request, then answers one byte every
    ``every`` seconds, forever (until stopped): each read gets a byte well within any
    per-read timeout, so only a deadline for the whole attempt ends it."""

    def __init__(self, every=0.1, headers_first=False, tls=None, answer=False):
        self.every, self.headers_first, self.tls, self.answer = every, headers_first, tls, answer
        if tls is None:
            self.listener = socket.create_server(("127.0.0.1", 0))
            self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/hook"
        else:  # on the address "localhost" resolves to first, which the poster uses
            info = socket.getaddrinfo("localhost", None, type=socket.SOCK_STREAM)[0]
            self.listener = socket.create_server((info[4][0], 0), family=info[0])
            self.url = f"https://localhost:{self.listener.getsockname()[1]}/hook"
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        self.listener.settimeout(0.1)
        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn):
        if self.tls is not None:
            conn.settimeout(5)
            try:
                conn = self.tls.wrap_socket(conn, server_side=True)
            except OSError:
                conn.close()
                return
        with conn:
            conn.recv(65536)
            if self.answer:  # a whole answer at once: a receiver that works
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close"
                             b"\r\n\r\nok")
                while conn.recv(65536):  # until the client closes (closing first may reset)
                    pass
                return
            if self.headers_first:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
            while not self.stopped.wait(self.every):
                try:
                    conn.sendall(b"H" if not self.headers_first else b"x")
                except OSError:
                    return  # the client gave up: what we want

    def stop(self):
        self.stopped.set()
        self.thread.join(5)
        self.listener.close()


@pytest.fixture(params=[False, True], ids=["status-line", "body"])
def trickler(request):
    server = Trickler(headers_first=request.param)
    yield server
    server.stop()


def bounded(call, seconds=20):
    """``call()``'s result, or an AssertionError when it is not over in ``seconds``."""
    result = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert result, f"still going after {seconds} s: the attempt has no deadline"
    return result[0]


def test_a_trickling_receiver_is_cut_off_at_the_deadline(trickler):
    poster = post.Poster(connect_timeout=1.0, timeout=1.0,
                         allowed=([], {"127.0.0.1"}))
    started = time.monotonic()
    outcome = bounded(lambda: poster.deliver(trickler.url, b"{}", {}))
    assert time.monotonic() - started < 15
    assert (outcome.ok, outcome.status, outcome.transient) == (False, None, True)
    assert outcome.error.startswith("timed out")


def test_the_timed_out_attempt_is_recorded_as_failed(redis, allow_loopback, trickler):
    endpoint = store.create(redis, {"url": trickler.url, "topics": ["*"]}, "test")
    notification = f"{int(time.time() * 1000)}-0"
    redis.rpush(store.queue_key(endpoint["id"]), f'{notification} {{"id":"{notification}"}}')
    sender = Sender(redis, endpoint["id"], Settings(connect_timeout=1.0, timeout=1.0))
    bounded(sender.step)
    state = store.state(redis, endpoint["id"])
    assert state["retrying"] == 1 and state["last_error"].startswith("timed out")
    assert "WEBHOOK_TIMEOUT" in state["last_error"]


@pytest.fixture
def tls(tmp_path, monkeypatch):
    """A certificate for ``localhost`` that the poster trusts (its https context is swapped
    for one that trusts only it); returns a server-side SSLContext."""
    import datetime
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    client = ssl.create_default_context(cafile=str(cert_path))
    client.sslsocket_class = post._PinnedHTTPS.context.sslsocket_class
    monkeypatch.setattr(post._PinnedHTTPS, "context", client)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_path, key_path)
    return server


def test_https_is_delivered_and_cut_off_at_the_deadline_too(tls):
    """Over TLS the deadline holds as well (the SSL socket is the deadline's own kind)."""
    answering = Trickler(every=0.05, headers_first=True, tls=tls, answer=True)
    trickling = Trickler(every=0.1, headers_first=True, tls=tls)
    try:
        poster = post.Poster(connect_timeout=1.0, timeout=1.0, allowed=([], {"localhost"}))
        assert bounded(lambda: poster.deliver(answering.url, b"{}", {})).ok
        outcome = bounded(lambda: poster.deliver(trickling.url, b"{}", {}))
        assert not outcome.ok and outcome.error.startswith("timed out")
    finally:
        answering.stop()
        trickling.stop()
