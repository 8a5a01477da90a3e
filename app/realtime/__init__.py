"""Socket.IO and Server-Sent Events for Herald: how a notification gets from Redis to a browser.

One relay per web process follows Redis and fans each notification out to the
connections that want it; every connection, Socket.IO's or SSE's, goes through
one lifecycle (lifecycle.py); ``wire/`` holds the HTTP and websocket transport
below python-socketio's public API. docs/architecture.md has the one map of
this package, file by file (tests/unit/test_docs_index.py keeps it whole), and
the path of one notification; docs/realtime.md the reasons and the figures.

app/services.py builds these objects and wires them, each given its
collaborators when made. python-socketio 5 replaces gevent-socketio (Python 2
only). Under gevent (monkey-patched, as in ``wsgi.py``) it runs in gevent mode
with gevent-websocket; elsewhere (CLI, Flask test client) in threading mode,
where it is built but not served.
"""
