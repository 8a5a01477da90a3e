"""A pywsgi server on a free loopback port for the wire tests that serve real requests."""
import contextlib

from gevent import pywsgi


@contextlib.contextmanager
def pywsgi_serving(app, handler_class):
    """``app`` served by pywsgi with ``handler_class`` on 127.0.0.1, stopped after."""
    server = pywsgi.WSGIServer(("127.0.0.1", 0), app, handler_class=handler_class,
                               log=None, error_log=None)
    server.start()
    try:
        yield server
    finally:
        server.stop(timeout=2)
