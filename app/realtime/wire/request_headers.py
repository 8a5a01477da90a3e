"""A request's headers, read as gevent's pywsgi reads them, without the ``email`` parser
when every line is a plain ``Name: value``.

pywsgi parses every request's headers with ``http.client.parse_headers``: the
lines are read (at most 100, each at most 65,536 bytes), decoded as Latin-1 and
handed to ``email``'s feed parser. That parser is general (folded lines, mail's
``From `` lines, defects) and costs ~40 µs a request on this machine, some 2% of
a reconnect's CPU and 4% of a REST publish's.

:func:`read_headers` (the handler's ``MessageClass``, pywsgi's seam for this)
reads the lines exactly as ``http.client`` does. When each is a plain header
(a name of visible characters but ``:``, a colon, a value of visible ASCII,
spaces and tabs, then CRLF or LF), it builds the same message the parser would
have built: the same class (gevent's), the same (name, value) pairs in order, the
value stripped of the spaces and tabs after the colon as ``email`` strips it.
Anything else (a folded line, a control or non-ASCII byte, a bare CR, a line
with no colon, too long a line, too many lines, the end of the stream before the
blank line) is handed, as the very bytes read, to gevent's own parser, which
then answers as it always has.

A plain line holds none of the bytes ``email`` reads its own way: it splits
lines on more than LF (``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``,
``\\x85``, CR), and a line with any of them goes to its parser.
tests/unit/realtime/wire/test_request_headers.py holds the two to the same answer
for any input.
"""
import io
import re

from gevent.pywsgi import headers_factory

MAX_LINE = 65536  # http.client's _MAXLINE: a longer line is "Line too long"
MAX_LINES = 100  # http.client's _MAXHEADERS: more is an error
ENDS = (b"\r\n", b"\n", b"")
PLAIN = re.compile(rb"([\x21-\x39\x3b-\x7e]+):[ \t]*([\x20-\x7e\t]*)\r?\n")
# The class gevent's parser builds (its own, of http.client's HTTPMessage), asked
# of the parser itself rather than named.
MESSAGE = type(headers_factory(io.BytesIO(b"\r\n")))


def read_headers(fp, *_args):
    """The headers of the request in ``fp``, read up to and with the blank line after
    them: a message as gevent's ``headers_factory`` makes it (see the module)."""
    lines = []
    pairs = []
    plain = True
    while True:
        line = fp.readline(MAX_LINE + 1)
        lines.append(line)
        if len(line) > MAX_LINE or len(lines) > MAX_LINES:
            return headers_factory(io.BytesIO(b"".join(lines)))
        if line in ENDS:
            break
        if plain:
            match = PLAIN.fullmatch(line)
            if match is None:
                plain = False
            else:
                pairs.append(match.groups())
    if not plain or line == b"":
        return headers_factory(io.BytesIO(b"".join(lines)))
    message = MESSAGE()
    message.set_payload("")
    for name, value in pairs:
        message[name.decode("ascii")] = value.decode("ascii")
    return message
