"""Refusing a connection past the web server's limits, and knowing a health probe.

Used by admission.py before anything of a connection is read: the answer is
a complete HTTP 503 written straight to the socket, which is then closed.
"""
import socket as sockets

from app.realtime.wire.parking import PROBES

PROBE_WAIT = 1.0  # seconds to wait for an over-limit connection's request line


def refusal(reason, retry_after=5):
    """A complete HTTP 503 answer naming ``reason``."""
    body = ('{"error":"' + reason + '"}').encode()
    return (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            b"Retry-After: " + str(retry_after).encode() + b"\r\nConnection: close\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def is_probe(sock, wait=PROBE_WAIT):
    """True when the connection's first bytes (waited for ``wait`` seconds at most,
    and left unread) are a health probe's request line."""
    try:
        sock.settimeout(wait)
        start = sock.recv(16, sockets.MSG_PEEK)
    except OSError:
        return False
    return bool(start) and start.startswith(PROBES)


def refuse(sock, reason):
    """Answer ``sock`` 503 naming ``reason``, and close it."""
    try:
        sock.settimeout(1)
        sock.sendall(refusal(reason))
    except OSError:
        pass
    finally:
        sock.close()
