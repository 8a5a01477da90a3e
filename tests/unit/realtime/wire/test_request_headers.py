"""A request's headers read without the ``email`` parser answer as gevent's parser does
(app/realtime/wire/request_headers.py, Herald's handler's ``MessageClass``).

Each input is read twice, by ``read_headers`` and by gevent's ``headers_factory``
(``http.client.parse_headers``, then ``email``): the same class, status, headers in
order, environ lines, payload and defects, the same error, and the stream left at
the same byte. Generated inputs mix plain lines with every byte ``email`` treats
apart (folds, bare CR, the line breaks ``str.splitlines`` knows, controls,
Latin-1); the named ones are request smuggling's usual suspects. A plain request
is then served by a real pywsgi server without ``email`` parsing it at all."""
import email.parser
import io

import pytest
from gevent import socket
from gevent.pywsgi import headers_factory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.realtime.wire import handler
from app.realtime.wire.request_headers import MAX_LINE, MAX_LINES, read_headers
from tests.unit.realtime.wire.serving import pywsgi_serving

BODY = b"GET / HTTP/1.1\r\nHost: next\r\n\r\n"  # what follows the head (a pipelined request)


def outcome(parse, data):
    """What ``parse`` makes of ``data``: everything a reader of the message can see,
    or the error; and where it left the stream."""
    fp = io.BytesIO(data)
    try:
        message = parse(fp, 0)
    except Exception as exc:  # noqa: BLE001 - the error is part of the answer compared
        return ("error", type(exc), str(exc)), fp.tell()
    return (type(message), message.status, message.items(), list(message.headers),
            message.get_payload(), [type(d) for d in message.defects],
            message.get_unixfrom(), message.typeheader,
            message.getheader("content-length")), fp.tell()


def same(data):
    ours, theirs = outcome(read_headers, data), outcome(headers_factory, data)
    assert ours == theirs, data


SMUGGLING = [
    b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
    b"Content-Length : 5\r\n\r\n",
    b"Content-Length:5\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"Transfer-Encoding:\r\n chunked\r\n\r\n",
    b"Transfer-Encoding: chunked\r\n\tx\r\n\r\n",
    b"Host: a\rTransfer-Encoding: chunked\r\n\r\n",
    b"Host: a\x85Transfer-Encoding: chunked\r\n\r\n",
    b"Host: a\x0bTransfer-Encoding: chunked\r\n\r\n",
    b"Host: a\x0cX: y\r\n\r\n",
    b"Host: a\x1cX: y\r\n\r\n",
    b"Host: a\x00b\r\n\r\n",
    b"Host: caf\xe9\r\n\r\n",
    b"Host: a\r\r\n\r\n",
    b"Host: a\n\r\nX: after the blank line\r\n\r\n",
    b" Host: a\r\n\r\n",
    b":no name\r\nHost: a\r\n\r\n",
    b"no colon\r\nHost: a\r\n\r\n",
    b"From someone\r\nHost: a\r\n\r\n",
    b"From: someone\r\n\r\n",
    b"Host:   spaces and\ttabs\t  \r\n\r\n",
    b"Host:\r\n\r\n",
    b"Host: a:b:c\r\nX-Y_Z: 1\r\n\r\n",
    b"Host: a\r\n",  # the stream ends before the blank line
    b"Host: a",
    b"\r\n",
    b"\n",
    b"",
    b"Host: a\nUpgrade: websocket\n\n",
]


@pytest.mark.parametrize("head", SMUGGLING)
def test_each_named_case_is_read_as_gevent_reads_it(head):
    same(head + BODY)


@pytest.mark.parametrize("count", [MAX_LINES - 1, MAX_LINES, MAX_LINES + 1])
def test_the_count_of_lines_is_bounded_as_gevent_bounds_it(count):
    same(b"".join(b"X-%d: v\r\n" % i for i in range(count)) + b"\r\n" + BODY)


@pytest.mark.parametrize("size", [MAX_LINE - 2, MAX_LINE - 1, MAX_LINE, MAX_LINE + 1])
def test_a_long_line_is_bounded_as_gevent_bounds_it(size):
    line = b"X: " + b"v" * (size - 5) + b"\r\n"
    same(b"Host: a\r\n" + line + b"\r\n" + BODY)


BYTES = st.sampled_from([b"a", b"Z", b"0", b"-", b"_", b":", b" ", b"\t", b"\r", b"\n", b"\r\n",
                         b"\x00", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x7f", b"\x85",
                         b"\xa0", b"\xe9", b"\xff", b"From ", b"(", b"\""])
VALUE_BYTES = [b"v", b"1", b" ", b"\t", b"=", b"/", b":", b"v", b"1", b" ",  # mostly plain,
               b"\r", b"\x0b", b"\x85", b"\xe9", b"\x00"]  # now and then not
NAMES = st.sampled_from([b"Host", b"Content-Length", b"Transfer-Encoding", b"X_Y", b"a", b"",
                         b"Bad Name", b"From", b"\xe9"])


@st.composite
def heads(draw):
    """A head of lines, most of them plain, some not, ended or not by a blank line."""
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            value = b"".join(draw(st.lists(st.sampled_from(VALUE_BYTES), max_size=8)))
            lines.append(draw(NAMES) + b":" + value + draw(st.sampled_from([b"\r\n", b"\n"])))
        else:
            lines.append(b"".join(draw(st.lists(BYTES, max_size=10))) + b"\r\n")
    end = draw(st.sampled_from([b"\r\n", b"\n", b""]))
    return b"".join(lines) + end + BODY


@settings(max_examples=1500, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(heads())
def test_any_head_is_read_as_gevent_reads_it(data):
    same(data)


def serving(app):
    return pywsgi_serving(app, handler.handler_class(60, 5))


def served(server, head):
    """The answer's body to ``GET /`` with ``head``'s header lines."""
    with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\n" + head + b"Connection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data.partition(b"\r\n\r\n")[2]


def test_a_plain_request_is_served_without_the_email_parser_and_a_folded_one_with_it(monkeypatch):
    parsed = []
    original = email.parser.Parser.parsestr
    monkeypatch.setattr(email.parser.Parser, "parsestr",
                        lambda self, text, headersonly=False: parsed.append(text) or
                        original(self, text, headersonly))

    def app(environ, start_response):
        answer = f"{environ.get('HTTP_X_A')}|{environ.get('HTTP_X_B')}".encode()
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(answer)))])
        return [answer]

    with serving(app) as server:
        assert served(server, b"Host: x\r\nX-A: 1\r\nX-A: 2\r\nX-B:  b \r\n") == b"1,2|b"
        assert parsed == []
        # gevent's own answer to a folded line: the fold kept in the value
        assert served(server, b"Host: x\r\nX-A: 1\r\n  folded\r\nX-B: b\r\n") == b"1\r\n  folded|b"
        assert len(parsed) == 1
