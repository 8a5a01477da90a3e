"""ALLOWED_HOSTS: a request naming another host is refused (DNS rebinding), on Flask's
routes and on /socket.io/ alike, which python-socketio serves before Flask."""
import pytest

from app import create_app
from app.settings import Config, TestConfig

POLL = "/socket.io/?EIO=4&transport=polling"


def get(app, path, host):
    return app.test_client().get(path, headers={"Host": host})


@pytest.mark.parametrize("host", ["localhost", "localhost:5000", "127.0.0.1:5000", "[::1]:5000",
                                  "LOCALHOST."])
def test_the_default_allows_this_machine(app, host):
    assert get(app, "/api/notifications", host).status_code == 401  # reached the API
    assert get(app, POLL, host).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:5000", "127.0.0.1.evil.example",
                                  "localhost@evil.example", "[::2]", "", "a b"])
def test_another_host_is_refused_everywhere(app, host):
    api = get(app, "/api/notifications", host)
    assert api.status_code == 400 and api.get_json()["field"] == "Host"
    assert "ALLOWED_HOSTS" in api.get_json()["error"]
    page = get(app, "/login", host)
    assert page.status_code == 400 and page.mimetype == "text/plain"
    assert get(app, POLL, host).status_code == 400
    assert get(app, "/metrics", host).status_code == 400


def test_health_probes_answer_whatever_the_host(app):
    """A load balancer probes by address; the probes say only whether to send traffic."""
    assert get(app, "/healthz", "10.1.2.3:5000").status_code == 200
    assert get(app, "/readyz", "10.1.2.3:5000").status_code in (200, 503)


def test_herald_url_and_host_join_the_default(redis_server, monkeypatch):
    monkeypatch.setenv("HERALD_URL", "https://herald.example.com/")
    monkeypatch.setenv("HOST", "herald.internal")
    app = create_app(TestConfig(redis_server.url))
    for host in ("herald.example.com", "herald.internal:5000", "localhost"):
        assert get(app, POLL, host).status_code == 200, host
    assert get(app, POLL, "other.example.com").status_code == 400


def test_a_wildcard_allows_subdomains_only(redis_server):
    app = create_app(TestConfig(redis_server.url, ALLOWED_HOSTS=["*.example.com", "10.0.0.5"]))
    assert get(app, POLL, "a.example.com").status_code == 200
    assert get(app, POLL, "a.b.example.com:443").status_code == 200
    assert get(app, POLL, "10.0.0.5:5000").status_code == 200
    for host in ("example.com", "localhost", "aexample.com", "a.example.com.evil"):
        assert get(app, POLL, host).status_code == 400, host


def test_a_star_allows_any_host(redis_server):
    app = create_app(TestConfig(redis_server.url, ALLOWED_HOSTS=["*"]))
    assert get(app, POLL, "anything.example").status_code == 200


@pytest.mark.parametrize("value", ["exa*mple.com", "*", "https://x.example", "a/b"])
def test_the_setting_is_read_and_checked(monkeypatch, value):
    monkeypatch.setenv("ALLOWED_HOSTS", f"herald.example.com, {value}")
    if value == "*":
        assert Config().ALLOWED_HOSTS == ["herald.example.com", "*"]
    else:
        with pytest.raises(SystemExit, match="ALLOWED_HOSTS"):
            Config()


def test_behind_a_trusted_proxy_the_forwarded_host_is_checked(redis_server):
    app = create_app(TestConfig(redis_server.url, TRUSTED_PROXIES=1))
    client = app.test_client()
    forwarded = {"Host": "10.0.0.1:5000", "X-Forwarded-For": "192.0.2.9"}
    assert client.get(POLL, headers=dict(forwarded, **{"X-Forwarded-Host": "localhost"})
                      ).status_code == 200
    assert client.get(POLL, headers=dict(forwarded, **{"X-Forwarded-Host": "evil.example"})
                      ).status_code == 400
