"""Rate limits: per client address on sign-in and tokens, per API key on the API;
429 with Retry-After, counted in Redis so that every web process shares them."""
import pytest

from app import create_app
from app.services import of as of_app
from app.settings import TestConfig
from app.users import accounts


@pytest.fixture
def limited(redis_server, redis):
    app = create_app(TestConfig(redis_server.url, RATELIMIT_LOGIN="3 per minute",
                                RATELIMIT_TOKEN="2 per minute", RATELIMIT_API_KEY="5 per minute"))
    accounts.create_user(redis, "ann", "ann-password")
    return app


def test_token_endpoint_is_limited_per_address(limited):
    client = limited.test_client()
    body = {"username": "ann", "password": "wrong-password"}
    answers = [client.post("/auth/token", json=body) for _ in range(2)]
    assert [answer.status_code for answer in answers] == [401, 401]
    # No X-RateLimit-* headers on the way: each cost two Redis reads per request.
    assert not [name for name in answers[0].headers.keys() if name.lower().startswith("x-ratelimit")]
    refused = client.post("/auth/token", json={"username": "ann", "password": "ann-password"})
    assert refused.status_code == 429
    assert refused.get_json()["error"].startswith("rate limit exceeded: 2 per 1 minute")
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    # Another address has its own count.
    other = client.post("/auth/token", json={"username": "ann", "password": "ann-password"},
                        environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert other.status_code == 200


def test_login_form_is_limited_per_address(limited):
    client = limited.test_client()
    page = client.get("/login").get_data(as_text=True)
    import re
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    form = {"username": "ann", "password": "wrong-password", "csrf_token": csrf}
    assert [client.post("/login", data=form).status_code for _ in range(3)] == [401, 401, 401]
    refused = client.post("/login", data=form)
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    assert "Too many sign-in attempts: try again in" in refused.get_data(as_text=True)
    german = client.post("/login", data=form, headers={"Accept-Language": "de"})
    assert german.status_code == 429
    assert "Zu viele Anmeldeversuche" in german.get_data(as_text=True), "a page speaks its reader's language"
    assert client.get("/login").status_code == 200  # only POSTs count


def test_api_is_limited_per_key_and_the_limit_is_shared_through_redis(limited, redis_server):
    first, second = accounts.create_api_key(of_app(limited).redis, "etl"), None
    second = accounts.create_api_key(of_app(limited).redis, "cron")
    envelope = {"topic": "etl.done", "title": "done"}
    one = limited.test_client()
    # Another app on the same Redis: a second web process.
    other = create_app(TestConfig(redis_server.url, RATELIMIT_API_KEY="5 per minute")).test_client()
    codes = [client.post("/api/notifications", json=envelope,
                         headers={"Authorization": f"Bearer {first}"}).status_code
             for client in (one, other, one, other, one, other)]
    assert codes == [201] * 5 + [429]
    refused = one.post("/api/notifications", json=envelope, headers={"Authorization": f"Bearer {first}"})
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    assert refused.get_json()["error"].startswith("rate limit exceeded")
    # Another key is counted apart; a refused request stored nothing.
    assert one.post("/api/notifications", json=envelope,
                    headers={"Authorization": f"Bearer {second}"}).status_code == 201
    assert of_app(limited).redis.xlen("herald:stream") == 6


def test_limits_survive_redis_going_away(limited, redis_server):
    """With Redis unreachable the limiter falls back to memory: the request gets the
    API's own 503, not a 500 from the limiter."""
    from app.settings import TestConfig as Config
    app = create_app(Config("redis://127.0.0.1:1/0", RATELIMIT_API_KEY="5 per minute"))
    reply = app.test_client().post("/api/notifications", json={"topic": "a", "title": "b"},
                                   headers={"Authorization": "Bearer hk_nothing"})
    assert reply.status_code == 503


def _commands(redis):
    """Every command Redis has run so far, by name (scripts' own calls included)."""
    return {name: stats["calls"] for name, stats in redis.info("commandstats").items()}


@pytest.mark.single_redis("counts the commands one redis-server ran (on a cluster the key is read "
                          "before the script: app/stream/publish.py)")
def test_a_publish_with_a_known_key_is_limited_within_its_one_round_trip(limited, redis):
    """The publish script counts the limit: no round trip of the limiter's own."""
    key = accounts.create_api_key(redis, "etl")
    client, headers = limited.test_client(), {"Authorization": f"Bearer {key}"}
    envelope = {"topic": "etl.done", "title": "done"}
    assert client.post("/api/notifications", json=envelope, headers=headers).status_code == 201
    before = _commands(redis)
    assert client.post("/api/notifications", json=envelope, headers=headers).status_code == 201
    after = _commands(redis)
    sent = {name: after[name] - before.get(name, 0) for name in after
            if after[name] != before.get(name, 0) and name != "cmdstat_info"}
    assert sent["cmdstat_evalsha"] == 1, sent
    assert sent["cmdstat_incr"] == 1, sent  # the limit's count, inside the script
    assert sent["cmdstat_xadd"] == 1, sent


@pytest.mark.parametrize("refused, answer", [
    ({"data": "not json", "content_type": "text/plain"}, 400),
    ({"data": "{not json", "content_type": "application/json"}, 400),
    ({"json": {"topic": "Bad Topic!", "title": "x"}}, 400),
    ({"json": {"title": "no topic"}}, 400),
])
def test_a_refused_publish_counts_against_the_limit(limited, redis, refused, answer):
    key = accounts.create_api_key(redis, "etl")
    client, headers = limited.test_client(), {"Authorization": f"Bearer {key}"}
    codes = [client.post("/api/notifications", headers=headers, **refused).status_code
             for _ in range(6)]
    assert codes == [answer] * 5 + [429]
    good = client.post("/api/notifications", json={"topic": "etl.done", "title": "done"},
                       headers=headers)
    assert good.status_code == 429 and 0 < int(good.headers["Retry-After"]) <= 60
    assert good.get_json()["error"] == "rate limit exceeded: 5 per 1 minute"
    assert redis.xlen("herald:stream") == 0


def test_the_batch_endpoint_is_limited_apart_and_writes_nothing_past_it(limited, redis):
    key = accounts.create_api_key(redis, "etl")
    client, headers = limited.test_client(), {"Authorization": f"Bearer {key}"}
    batch = {"notifications": [{"topic": "etl.a", "title": "a"}, {"topic": "etl.b", "title": "b"}]}
    codes = [client.post("/api/notifications/batch", json=batch, headers=headers).status_code
             for _ in range(6)]
    assert codes == [201] * 5 + [429]
    assert redis.xlen("herald:stream") == 10
    # The single publish has a count of its own (as Flask-Limiter counted per view).
    assert client.post("/api/notifications", json={"topic": "etl.c", "title": "c"},
                       headers=headers).status_code == 201


def test_the_first_limit_reached_is_the_one_named(redis_server, redis):
    app = create_app(TestConfig(redis_server.url, RATELIMIT_API_KEY="3 per hour; 2 per minute"))
    key = accounts.create_api_key(redis, "etl")
    client, headers = app.test_client(), {"Authorization": f"Bearer {key}"}
    envelope = {"topic": "etl.done", "title": "done"}
    codes = [client.post("/api/notifications", json=envelope, headers=headers).status_code
             for _ in range(3)]
    assert codes == [201, 201, 429]
    refused = client.post("/api/notifications", json=envelope, headers=headers)
    assert refused.get_json()["error"] == "rate limit exceeded: 2 per 1 minute"
    assert 0 < int(refused.headers["Retry-After"]) <= 60


def test_other_api_views_are_still_limited_by_the_limiter(limited, redis):
    key = accounts.create_api_key(redis, "etl")
    client, headers = limited.test_client(), {"Authorization": f"Bearer {key}"}
    codes = [client.get("/api/notifications", headers=headers).status_code for _ in range(6)]
    assert codes == [403] * 5 + [429]  # an API key may not read, and is counted doing so
    assert client.post("/api/notifications", json={"topic": "etl.c", "title": "c"},
                       headers=headers).status_code == 201


def test_an_admin_publishing_by_session_is_not_limited(limited, redis):
    accounts.create_user(redis, "root", "root-password", admin=True)
    client = limited.test_client()
    token = client.post("/auth/token", json={"username": "root", "password": "root-password"})
    headers = {"Authorization": f"Bearer {token.get_json()['token']}"}
    codes = [client.post("/api/notifications", json={"topic": "ops.x", "title": "x"},
                         headers=headers).status_code for _ in range(7)]
    assert codes == [201] * 7


SPELLINGS = ["9.9.9.9", "9.9.9.9:1234", "::ffff:9.9.9.9", "009.9.9.9", "[::ffff:9.9.9.9]:443",
             "::FFFF:909:909", " 9.9.9.9 "]


def test_behind_a_proxy_every_spelling_of_an_address_is_one_address(redis_server, redis):
    """TRUSTED_PROXIES: the client's address is the proxy's X-Forwarded-For, normalised
    (a port, [v6]:port, IPv4-mapped IPv6, leading zeros), so one client cannot count
    as several by spelling its address differently."""
    app = create_app(TestConfig(redis_server.url, TRUSTED_PROXIES=1,
                                RATELIMIT_TOKEN=f"{len(SPELLINGS)} per minute"))
    client = app.test_client()
    body = {"username": "ann", "password": "wrong-password"}
    answers = [client.post("/auth/token", json=body, headers={"X-Forwarded-For": spelling})
               for spelling in SPELLINGS]
    assert [a.status_code for a in answers] == [401] * len(SPELLINGS)
    for spelling in SPELLINGS:
        refused = client.post("/auth/token", json=body, headers={"X-Forwarded-For": spelling})
        assert refused.status_code == 429, spelling
    other = client.post("/auth/token", json=body, headers={"X-Forwarded-For": "[2001:db8::9]:80"})
    assert other.status_code == 401


def test_behind_a_proxy_what_is_not_an_address_counts_as_the_proxy_s(redis_server, redis):
    app = create_app(TestConfig(redis_server.url, TRUSTED_PROXIES=1, RATELIMIT_TOKEN="2 per minute"))
    client = app.test_client()
    body = {"username": "ann", "password": "wrong-password"}
    via = {"REMOTE_ADDR": "10.0.0.2"}
    codes = [client.post("/auth/token", json=body, environ_base=via,
                         headers={"X-Forwarded-For": junk}).status_code
             for junk in ("unknown", "not an address", "9.9.9.9.9")]
    assert codes == [401, 401, 429]  # one count: the proxy's own address
    assert client.post("/auth/token", json=body, environ_base=via,
                       headers={"X-Forwarded-For": "9.9.9.9"}).status_code == 401
