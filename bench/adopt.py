"""A host app's view that publishes, with Herald up, down and hung; and an outage with
a ``kill -9`` of the host right after a commit (issue 34, item 1).

The host is a real Flask + Flask-SQLAlchemy app (SQLite, WAL) served by werkzeug's
threaded server in a process of its own, adopting Herald as docs/adopt.md says:
``POST /send`` stores a message and ``herald.publish``es its alert in the same
transaction; ``POST /send-now`` publishes with ``herald.client`` (Herald's answer
now, within HERALD_TIMEOUT) as a view that must have the id would.

1. Latency: ``--requests`` sequential ``POST /send`` from one keep-alive client with
   Herald up, then stopped (connections refused), then hung (SIGSTOP: connections
   accepted, never answered); median and p99 of each, and the ratio to "up".
   ``/send-now`` with Herald hung: how long the view is held (HERALD_TIMEOUT).
2. Exactly once: a client sends numbered messages steadily; Herald is killed for
   ``--outage`` seconds; during it, the host is SIGKILLed right after a 201 and
   started again; Herald comes back; every acknowledged message's alert must be in
   Herald's stream exactly once.

    .venv/bin/python bench/adopt.py [--requests 400] [--outage 30]
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import orjson
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, percentile, save, stack  # noqa: E402

from app.stream.keys import STREAM  # noqa: E402
from tests.support import free_port, wait_until  # noqa: E402

HOST = '''
import os, sys
from flask import Flask, jsonify, request
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import event, String
from sqlalchemy.orm import Mapped, mapped_column
from herald_client.flask import Herald

db = SQLAlchemy()
herald = Herald()


class Message(db.Model):
    id: Mapped[int] = mapped_column(primary_key=True)
    body: Mapped[str] = mapped_column(String(100))


def create_app():
    app = Flask(__name__)
    app.config.update(SQLALCHEMY_DATABASE_URI=os.environ["HOST_DB"],
                      HERALD_URL=os.environ["HERALD_URL"], HERALD_API_KEY=os.environ["HERALD_KEY"])
    db.init_app(app)
    herald.init_app(app)
    with app.app_context():
        event.listen(db.engine, "connect", lambda c, _r: c.execute("PRAGMA journal_mode=WAL"))
        db.create_all()
        herald.start_relay()

    @app.post("/send")
    def send():
        message = Message(body=request.get_json()["body"])
        db.session.add(message)
        herald.publish("bench.message", "New message", body=message.body, user="7")
        db.session.commit()
        return jsonify(id=message.id), 201

    @app.post("/send-now")
    def send_now():
        try:
            return jsonify(herald.client.publish("bench.now", "Now")), 201
        except Exception as exc:
            return jsonify(error=str(exc)), 503
    return app


if __name__ == "__main__":
    create_app().run(host="127.0.0.1", port=int(sys.argv[1]), threaded=True)
'''


class Host:
    """The host app in a process of its own."""

    def __init__(self, folder, herald_url, key):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.script = Path(folder) / "host.py"
        self.script.write_text(HOST)
        self.env = dict(os.environ, HOST_DB=f"sqlite:///{folder}/host.db", HERALD_URL=herald_url,
                        HERALD_KEY=key, PYTHONPATH=str(ROOT))
        self.log = open(Path(folder) / "host.log", "ab")
        self.process = None

    def start(self):
        self.process = subprocess.Popen([sys.executable, str(self.script), str(self.port)],
                                        env=self.env, stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(self._up, timeout=30, message="the host app")

    def _up(self):
        try:
            return requests.post(self.url + "/nothing", timeout=1).status_code == 404
        except requests.RequestException:
            return False

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.log.close()


def timed(session, url, count, prefix):
    times = []
    for n in range(count):
        started = time.perf_counter()
        reply = session.post(url, json={"body": f"{prefix}-{n}"}, timeout=30)
        times.append((time.perf_counter() - started) * 1000)
        assert reply.status_code == 201, reply.text
    return times


def figures(times):
    return {"median_ms": round(percentile(times, 0.5), 2), "p99_ms": round(percentile(times, 0.99), 2)}


def latency(host, server, count):
    session = requests.Session()
    timed(session, host.url + "/send", 50, "warm")
    up = timed(session, host.url + "/send", count, "up")
    server.stop()
    down = timed(session, host.url + "/send", count, "down")
    server.start()
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        hung = timed(session, host.url + "/send", count, "hung")
        held = []
        for _ in range(5):
            started = time.perf_counter()
            status = session.post(host.url + "/send-now", timeout=30).status_code
            held.append(((time.perf_counter() - started) * 1000, status))
    finally:
        os.kill(server.process.pid, signal.SIGCONT)
    result = {"up": figures(up), "down": figures(down), "hung": figures(hung)}
    for name in ("down", "hung"):
        result[name]["p99_ratio_to_up"] = round(result[name]["p99_ms"] / result["up"]["p99_ms"], 2)
    result["send_now_hung_ms"] = [round(ms) for ms, _status in held]
    result["send_now_hung_status"] = sorted({status for _ms, status in held})
    return result


def exactly_once(host, server, redis, outage, rate=20.0):
    """Numbered messages, Herald away for ``outage`` s, the host SIGKILLed mid-way."""
    acknowledged, stop = [], threading.Event()
    lock = threading.Lock()

    def send():
        session, n = requests.Session(), 0
        while not stop.is_set():
            try:
                reply = session.post(host.url + "/send", json={"body": f"once-{n}"}, timeout=5)
                if reply.status_code == 201:
                    with lock:
                        acknowledged.append(f"once-{n}")
            except requests.RequestException:
                session = requests.Session()  # the host is being restarted
            n += 1
            stop.wait(1 / rate)

    sender = threading.Thread(target=send)
    sender.start()
    time.sleep(2)
    server.kill()
    time.sleep(outage / 3)
    with lock:  # right after a commit acknowledged: no request in flight is counted
        host.kill()
        killed_after = len(acknowledged)
    host.start()
    time.sleep(outage * 2 / 3)
    server.start()
    time.sleep(2)
    stop.set()
    sender.join()

    def bodies():
        return [orjson.loads(fields[b"envelope"]).get("body") for _id, fields in redis.xrange(STREAM)
                if orjson.loads(fields[b"envelope"])["topic"] == "bench.message"]
    wanted = set(acknowledged)
    started = time.monotonic()
    wait_until(lambda: wanted <= set(bodies()), timeout=120, message="every acknowledged alert")
    caught_up = time.monotonic() - started
    seen = [b for b in bodies() if b and b.startswith("once-")]
    return {"acknowledged": len(acknowledged), "acknowledged_before_kill": killed_after,
            "delivered": len(set(seen) & wanted), "missing": len(wanted - set(seen)),
            "duplicates": len(seen) - len(set(seen)), "outage_s": outage,
            "caught_up_after_return_s": round(caught_up + 2, 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--outage", type=float, default=30.0)
    args = parser.parse_args()
    with stack() as (_redis_server, redis, server, key):
        folder = Path(tempfile.mkdtemp(prefix="herald-bench-adopt-"))
        host = Host(folder, server.url, key)
        host.start()
        try:
            result = {"latency": latency(host, server, args.requests)}
            print(orjson.dumps(result["latency"], option=orjson.OPT_INDENT_2).decode())
            result["exactly_once"] = exactly_once(host, server, redis, args.outage)
            print(orjson.dumps(result["exactly_once"], option=orjson.OPT_INDENT_2).decode())
        finally:
            host.stop()
    save("adopt", result)


if __name__ == "__main__":
    main()
