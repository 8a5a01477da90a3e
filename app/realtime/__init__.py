"""Socket.IO for Herald: how a notification gets from Redis to a browser.

    app/stream/publish.py one Lua script: the stream entry and the live copy
    app/stream/follow.py  LiveFollower: herald:live followed without missing anything
    relay.py              ONE Redis subscription and ONE greenlet per process -> rooms
    redis_watch.py        whether this process reaches Redis, told to its browsers
                          (``status``) when that changes: nothing per notification
    rooms.py              which connections want a notification
    seam.py               ReplaySeam: no gap and no duplicate between replay and live
    replay.py             one replay (held, read, released), for sockets and streams
    namespace.py          NotificationsNamespace: connect, replay, subscriptions, read
    server.py             HeraldServer: Socket.IO policy (fan-out, shedding slow
                          clients, refusing bad packets)
    origins.py            which pages may connect (Herald's own, SOCKETIO_ORIGINS)
    storm.py              a reconnect storm: connects a second and replays at once
                          bounded; past them "unavailable: busy, retry later"
    budgets.py            what one connection may ask: a message budget, coalesced reads
    batched_reads.py      the Redis reads of connects at the same moment, in one pipeline
    sse_hub.py            Server-Sent Events streams, fed by the same relay
                          (the endpoint: app/web/api/stream.py)
    presence.py           who is online: each process's connections per user, in
                          Redis; join/leave as ``presence`` events to watchers
    wire/                 everything below python-socketio's public API: the
                          websocket transport, fan-out frames, the client manager,
                          the server's admission (see docs/realtime.md)
    clients/js/herald.js  the browser's end

app/services.py builds these objects and wires them, each given its
collaborators when made. python-socketio 5 replaces gevent-socketio (Python 2
only). Under gevent (monkey-patched, as in ``wsgi.py``) it runs in gevent mode
with gevent-websocket; elsewhere (CLI, Flask test client) in threading mode,
where it is built but not served.
"""
