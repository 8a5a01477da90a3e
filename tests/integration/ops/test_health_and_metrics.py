"""/healthz, /readyz and /metrics against a real web process, Redis and workers' figures."""
import re
import socket

import requests

from app.ops import metrics, worker_health
from app.stream.publish import Bus
from app.users import accounts, subscriptions
from tests.support import Listener, LiveServer, wait_until


def scrape(server, **headers):
    reply = requests.get(server.url + "/metrics", headers=headers, timeout=5)
    assert reply.status_code == 200, reply.text
    assert reply.headers["Content-Type"].startswith("text/plain")
    return reply.text


def value(text, name, **labels):
    """The sample ``name{labels}`` in a Prometheus text page (labels matched as given)."""
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            sample, number = line.rsplit(" ", 1)
            found = dict(re.findall(r'(\w+)="([^"]*)"', sample))
            if sample.split("{")[0] == name and all(found.get(k) == v for k, v in labels.items()):
                return float(number)
    raise AssertionError(f"{name} {labels} not in metrics:\n{text}")


def test_readyz_needs_redis_and_a_running_relay(client, live_server):
    reply = client.get("/readyz")  # an app whose relay was never started
    assert reply.status_code == 503 and "relay is not running" in reply.get_json()["reason"]
    ready = requests.get(live_server.url + "/readyz", timeout=5)
    assert ready.status_code == 200 and ready.json()["status"] == "ok"


def test_a_worker_fault_is_reported_but_leaves_the_web_process_ready(live_server, redis):
    """One failing worker must not take every web process out of the balancer: /readyz
    reflects what this process needs, and shows the fault, as /metrics does."""
    worker_health.fault(redis, "archiver", "the archive's disk is full")
    reply = requests.get(live_server.url + "/readyz", timeout=5)
    assert reply.status_code == 200 and reply.json()["status"] == "ok"
    assert reply.json()["faults"]["archiver"]["detail"] == "the archive's disk is full"
    assert value(scrape(live_server), "herald_worker_fault", worker="archiver") == 1
    worker_health.ok(redis, "archiver")
    assert "faults" not in requests.get(live_server.url + "/readyz", timeout=5).json()


def test_readyz_and_healthz_say_503_while_redis_is_away(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path)
    server.start()
    try:
        redis_server.kill()
        for path in ("/healthz", "/readyz"):
            reply = requests.get(server.url + path, timeout=10)
            assert reply.status_code == 503 and reply.json()["status"] == "unavailable"
        redis_server.start()
        wait_until(lambda: requests.get(server.url + "/readyz", timeout=5).status_code == 200,
                   timeout=20, message="ready again after Redis came back")
    finally:
        server.stop()


def test_metrics_count_clients_deliveries_batches_and_workers(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    subscriptions.add(redis, "ann", ["news"], limit=10)
    listeners = [Listener(live_server, live_server.token("ann", "ann-password")) for _ in range(3)]
    try:
        bus = Bus(redis)
        ids = [bus.publish("news.item", f"n {n}") for n in range(20)]
        for listener in listeners:
            wait_until(lambda: len(listener.ids()) == len(ids), timeout=10, message="deliveries")
        metrics.count(redis, "digest_emails_sent", 2)
        worker_health.bridge_backlog(redis, "bridge-host:1", 7)  # per bridge instance (issue 17)
        process = f"{socket.gethostname()}:{live_server.process.pid}"
        text = scrape(live_server)
        assert value(text, "herald_connected_clients", process=process) == 3
        assert value(text, "herald_deliveries_total", process=process) == 60
        assert value(text, "herald_notifications_relayed_total", process=process) == 20
        assert value(text, "herald_relay_connected", process=process) == 1
        assert value(text, "herald_fanout_batch_size_count", process=process) >= 1
        assert value(text, "herald_fanout_batch_size_sum", process=process) == 20
        assert value(text, "herald_relay_lag_seconds_count", process=process) >= 1
        assert value(text, "herald_slow_client_disconnects_total", process=process) == 0
        assert value(text, "herald_redis_reconnects_total", process=process) == 0
        assert value(text, "herald_digest_emails_sent_total") == 2
        assert value(text, "herald_bridge_backlog") == 7
        assert value(text, "herald_spark_jobs_failed_total") == 0
    finally:
        for listener in listeners:
            listener.close()


def test_metrics_of_every_web_process_are_on_any_of_them(redis_server, redis, tmp_path):
    servers = [LiveServer(redis_server.url, tmp_path) for _ in range(2)]
    try:
        for server in servers:
            server.start()
        text = scrape(servers[0])
        for server in servers:
            process = f"{socket.gethostname()}:{server.process.pid}"
            wait_until(lambda: f'process="{process}"' in scrape(servers[0]), timeout=15,
                       message="the other process's snapshot")
        assert "herald_connected_clients" in text
    finally:
        for server in servers:
            server.stop()


def test_metrics_token_guards_the_page(redis_server, redis, tmp_path):
    server = LiveServer(redis_server.url, tmp_path, METRICS_TOKEN="s3cret")
    server.start()
    try:
        assert requests.get(server.url + "/metrics", timeout=5).status_code == 401
        assert "herald_connected_clients" in scrape(server, Authorization="Bearer s3cret")
    finally:
        server.stop()
