"""Peer (a): the original article's design, one Redis subscription per connected client.

A python-socketio server in gevent mode, like Herald, but each connection
starts its own greenlet with its own Redis subscription to ``herald:live``,
decodes every message itself and emits the matches to its one client. The
same /notifications contract as far as the load generator uses it (any
token; ``subscribe`` with an ack).

    REDIS_URL=redis://127.0.0.1:6379 PORT=5101 python bench/peers/per_connection.py
"""
from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import os  # noqa: E402

import gevent  # noqa: E402
import gevent.event  # noqa: E402
import redis  # noqa: E402
import socketio  # noqa: E402
from gevent import pywsgi  # noqa: E402
from geventwebsocket.handler import WebSocketHandler  # noqa: E402

sio = socketio.Server(async_mode="gevent")
topics = {}
listening = {}  # sid -> Event set once its own Redis subscription is live


def matches(prefixes, topic):
    return any(p == "*" or p == topic or topic.startswith(p + ".") for p in prefixes)


class PerConnection(socketio.Namespace):
    def on_connect(self, sid, environ, auth=None):
        topics[sid] = set()
        listening[sid] = gevent.event.Event()
        gevent.spawn(self.listen, sid)

    def listen(self, sid):
        client = redis.Redis.from_url(os.environ["REDIS_URL"])
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe("herald:live")
        pubsub.get_message(timeout=1.0)  # the confirmation: from here on nothing is missed
        listening[sid].set()
        while sid in topics:
            message = pubsub.get_message(timeout=1.0)
            if message is None:
                continue
            envelope = json.loads(message["data"])
            if matches(topics.get(sid, ()), envelope["topic"]):
                self.emit("notification", envelope, to=sid)
        pubsub.close()
        client.close()

    def on_subscribe(self, sid, data):
        topics[sid].update(data["topics"])
        listening[sid].wait(10)  # fair: acknowledge once this client's subscription is live
        return {"ok": True, "topics": sorted(topics[sid])}

    def on_disconnect(self, sid, reason=None):
        topics.pop(sid, None)
        listening.pop(sid, None)


sio.register_namespace(PerConnection("/notifications"))
app = socketio.WSGIApp(sio)

if __name__ == "__main__":
    server = pywsgi.WSGIServer(("127.0.0.1", int(os.environ["PORT"])), app,
                               handler_class=WebSocketHandler, log=None)
    print("listening", flush=True)
    server.serve_forever()
