"""``OneSend``: a pywsgi handler mixin that sends a small answer's head and body together.

pywsgi writes a response's head and its body in two sends: two system calls
and, with ``TCP_NODELAY`` (handler.py), two segments for every small answer (a
quarter of a REST publish's CPU went to them: bench/rest_publish.py). With this
mixin first among a handler class's bases, the head is held while pywsgi writes
it and leaves with a first body part of up to ``ONE_SEND_MOST`` bytes; a larger
body is not copied behind it. It hooks pywsgi's ``_write_with_headers`` and
``_sendall``: tests/unit/realtime/wire/test_one_send.py counts the socket's sends
and fails if pywsgi stops calling them. The benches' floors use it too
(bench/peers/one_send.py), so that they answer as Herald does.
"""
ONE_SEND_MOST = 16 * 1024  # a body this small is copied behind the head, to leave in one send


class OneSend:
    """See the module. Usage: ``class Handler(OneSend, pywsgi.WSGIHandler): ...``."""

    held = None  # while the head is written: what waits to leave with the body

    def _write_with_headers(self, data):
        """pywsgi's, its head and a small first body part in one send."""
        if not data or len(data) > ONE_SEND_MOST:
            return super()._write_with_headers(data)
        self.held = bytearray()
        try:
            super()._write_with_headers(data)
            together = bytes(self.held)
        finally:
            self.held = None
        if together:
            super()._sendall(together)

    def _sendall(self, data):
        """pywsgi's every send; while a head is being written, kept for one send."""
        if self.held is not None:
            self.held += data
            return
        super()._sendall(data)
