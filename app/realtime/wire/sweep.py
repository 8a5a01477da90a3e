"""One look at every Engine.IO session every few seconds: what python-engineio's
service task does, without a wake per session.

python-engineio's ``Server._service_task`` closes a session whose ping went
unanswered (``Socket.check_ping_timeout``) and forgets a closed one. It goes
round its sessions once per ping timeout, one session per wake: it sleeps
``ping_timeout / len(sockets)`` between two, so a process with N sessions
wakes N/20 times a second for it, whatever they are doing: with 3,000 idle
connections, 150 of its 144-250 wakes a second. A wake costs a context switch
and a turn of the hub's loop, 200-400 µs of CPU on our machine; with this
sweep those 3,000 connections cost 14 wakes and 0.7% of a core a second,
against 144 and 4.1% (bench/idle_wakes.py; docs/capacity.md).

:func:`run` looks at all of them at once, every :data:`EVERY` seconds, and
lets the hub run every :data:`STRIDE` sessions, so that ten thousand of them
delay nothing by more than a fraction of a millisecond. A session whose ping
went unanswered is closed within ``ping_timeout + EVERY`` of the ping (25 s;
the library's round came past it up to ``ping_timeout`` late: 40 s). Websockets are also
closed by their own silence check (connection.py); this is what closes a
long-polling session whose client went away, and the backstop for any other.
"""
import logging

import gevent

EVERY = 5.0    # seconds between two looks at every session
STRIDE = 1000  # sessions looked at between two turns of the hub

log = logging.getLogger(__name__)


def sweep(server):
    """Look at each of ``server``'s sessions once: forget a closed one, close one
    whose ping went unanswered (python-engineio's ``check_ping_timeout``)."""
    sockets = server.sockets
    for count, socket in enumerate(list(sockets.values()), 1):
        try:
            if socket.closed:
                if sockets.get(socket.sid) is socket:
                    del sockets[socket.sid]
            elif not socket.closing:
                socket.check_ping_timeout()
        except Exception:  # one session's failure must not keep the others from a look
            log.exception("the sweep of Engine.IO sessions failed at session %s", socket.sid)
        if count % STRIDE == 0:
            gevent.sleep(0)


def run(server, every=EVERY):
    """``server``'s service task: :func:`sweep` every ``every`` seconds until its
    ``service_task_event`` is set (python-engineio's ``shutdown`` sets it and joins
    the task)."""
    server.service_task_event = stop = server.create_event()
    while not stop.wait(timeout=every):
        sweep(server)
