"""A small answer leaves in one send: head and body together (app/realtime/wire/one_send.py,
in Herald's handler).

pywsgi writes a response's head and its body in two sends; Herald's handler holds
the head for a body of up to ONE_SEND_MOST bytes. Counted at the socket: if gevent
renames what the handler hooks into, these fail (the two sends come back)."""
import pytest
from gevent import socket

from app.realtime.wire import handler
from app.realtime.wire.one_send import ONE_SEND_MOST
from tests.unit.realtime.wire.serving import pywsgi_serving

SENT = []  # the sizes of the server's sendall calls, in order


class Counted:
    """The server's side of a connection, each sendall counted. (Not ``_sock``: pywsgi
    reads a Python 3 socket's ``_sock`` out at the end, which on gevent's would wait.)"""

    def __init__(self, sock):
        self._inner = sock

    def sendall(self, data):
        SENT.append(len(data))
        return self._inner.sendall(data)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class CountingHandler(handler.handler_class(60, 5)):
    def __init__(self, sock, address, server, rfile=None):
        super().__init__(Counted(sock), address, server, rfile)


def app(environ, start_response):
    size = int(environ["PATH_INFO"].strip("/"))
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(size))])
    return [b"x" * size]


def serving():
    return pywsgi_serving(app, CountingHandler)


def fetch(server, size):
    SENT.clear()
    with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as sock:
        sock.sendall(f"GET /{size} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and body == b"x" * size
    return list(SENT)


@pytest.mark.parametrize("size", [2, 300, ONE_SEND_MOST])
def test_a_small_answer_leaves_in_one_send(size):
    with serving() as server:
        sent = fetch(server, size)
    assert len(sent) == 1 and sent[0] > size


def test_a_large_body_is_not_copied_behind_the_head():
    with serving() as server:
        sent = fetch(server, ONE_SEND_MOST + 1)
    assert len(sent) == 2 and sent[1] == ONE_SEND_MOST + 1
