"""GET /api/notifications (filters, search, ``before`` paging) and GET /api/notifications/<id>.

Checked against a seeded history and a reference model of the feed
(tests/unit/web/api/helpers.py): the API must answer exactly what the model says.
"""
import pytest

from app.stream.envelope import topic_matches
from app.stream.publish import Bus
from app.users import read_state
from tests.unit.web.api.helpers import bearer, ids, read, seed, subscribe, visible, walk_back

BOB_TOPICS = ("ops", "spark")


@pytest.fixture
def history(redis, user):
    """400 notifications; bob (the ``user`` fixture) subscribes to ops and spark."""
    subscribe(redis, "bob", BOB_TOPICS)
    published = seed(redis)
    return published, visible(published, "bob", BOB_TOPICS)


def test_the_reference_model_is_not_trivial(history):
    published, mine = history
    assert 100 < len(mine) < len(published)
    assert any(n.get("user") == "eve" for n in published)
    assert any(n["topic"] == "sparkle.noise" for n in published)


# -- paging -------------------------------------------------------------------------

@pytest.mark.parametrize("limit", [1, 7, 50, 1000])
def test_before_paging_walks_the_whole_feed_without_gap_or_duplicate(client, history, limit):
    _, mine = history
    walked, pages = walk_back(client, bearer("bob"), limit)
    assert walked == [n["id"] for n in mine]
    assert pages >= -(-len(mine) // limit)


def test_paging_across_scan_chunks_of_invisible_entries(client, redis, user):
    """Pages whose entries are far apart (more than a scan chunk of others between)."""
    subscribe(redis, "bob", ["rare"])
    bus = Bus(redis)
    wanted = []
    for block in range(4):
        wanted.append(bus.publish("rare.event", f"rare {block}"))
        for i in range(600):
            bus.publish("noise", f"n{block}-{i}")
    walked, _ = walk_back(client, bearer("bob"), 1)
    assert walked == wanted


def test_next_before_and_last_id(client, redis, history):
    _, mine = history
    first = read(client, bearer("bob"), limit=10)
    assert [n["id"] for n in first["notifications"]] == [n["id"] for n in mine[-10:]]
    assert first["next_before"] == mine[-10]["id"]
    assert first["last_id"] == redis.xrevrange("herald:stream", count=1)[0][0].decode()
    second = read(client, bearer("bob"), limit=10, before=first["next_before"])
    assert [n["id"] for n in second["notifications"]] == [n["id"] for n in mine[-20:-10]]
    # Before the oldest: nothing, and nowhere further back to go.
    empty = read(client, bearer("bob"), before=mine[0]["id"])
    assert empty["notifications"] == [] and empty["next_before"] is None
    # The whole feed in one page: the start of history is reached.
    assert read(client, bearer("bob"), limit=1000)["next_before"] is None


def test_an_empty_history(client, user):
    body = read(client, bearer("bob"))
    assert body == {"notifications": [], "last_id": None, "next_before": None}
    assert read(client, bearer("bob"), before="5-0")["notifications"] == []


def test_after_still_reads_forward_with_filters(client, history):
    _, mine = history
    errors = [n["id"] for n in mine if n["severity"] == "error"]
    assert ids(client, bearer("bob"), after="0", severity="error", limit=1000) == errors
    assert ids(client, bearer("bob"), after=errors[2], severity="error", limit=2) == errors[3:5]


# -- filters and search -----------------------------------------------------------------

def _expect(mine, *, severities=None, topic=None, text=None, unread_state=None):
    found = []
    for n in mine:
        if severities and n["severity"] not in severities:
            continue
        if topic and not topic_matches(topic, n["topic"]):
            continue
        if text and text.casefold() not in n["title"].casefold() \
                and text.casefold() not in n.get("body", "").casefold():
            continue
        if unread_state and read_state.is_read(unread_state, n["id"]):
            continue
        found.append(n["id"])
    return found


@pytest.mark.parametrize("params,model", [
    ({"severity": "error"}, {"severities": {"error"}}),
    ({"severity": "warning,critical"}, {"severities": {"warning", "critical"}}),
    ({"topic": "spark.job"}, {"topic": "spark.job"}),
    ({"topic": "ops.backup"}, {"topic": "ops.backup"}),
    ({"topic": "spark"}, {"topic": "spark"}),          # never sparkle.noise
    ({"topic": "billing"}, {"topic": "billing"}),      # not subscribed: only bob's private ones
    ({"q": "disk"}, {"text": "disk"}),                 # title "Disk …", any case
    ({"q": "ROLLUP"}, {"text": "rollup"}),
    ({"q": "about quota"}, {"text": "about quota"}),   # in the body
    ({"q": "  cache  "}, {"text": "cache"}),           # trimmed
    ({"q": "12"}, {"text": "12"}),
    ({"q": "nowhere-to-be-found"}, {"text": "nowhere-to-be-found"}),
    ({"q": "deploy", "severity": "info,success", "topic": "ops"},
     {"text": "deploy", "severities": {"info", "success"}, "topic": "ops"}),
])
def test_filters_match_the_reference(client, history, params, model):
    _, mine = history
    expected = _expect(mine, **model)
    assert ids(client, bearer("bob"), limit=1000, **params) == expected
    # Paged back in small pages, the same.
    walked, _ = walk_back(client, bearer("bob"), 3, **params)
    assert walked == expected


def test_search_does_not_match_the_topic_or_other_fields(client, redis, user):
    subscribe(redis, "bob", ["*"])
    bus = Bus(redis)
    bus.publish("ops.deploy", "plain", data={"note": "deploy"}, correlation_id="deploy-1")
    hit = bus.publish("ops.other", "x", body="we deploy now")
    assert ids(client, bearer("bob"), q="deploy") == [hit]


def test_search_is_on_the_text_not_its_json_encoding(client, redis, user):
    subscribe(redis, "bob", ["*"])
    bus = Bus(redis)
    quoted = bus.publish("t", 'say "hi"', body="tab\there \\ back")
    accented = bus.publish("t", "Café ÉTÉ")
    assert ids(client, bearer("bob"), q='"hi"') == [quoted]
    assert ids(client, bearer("bob"), q="tab\there") == [quoted]   # a tab, not "\\t"
    assert ids(client, bearer("bob"), q="tab\\there") == []
    assert ids(client, bearer("bob"), q="here \\ back") == [quoted]
    assert ids(client, bearer("bob"), q="été") == [accented]
    assert ids(client, bearer("bob"), q="u0022") == []    # no match inside escapes


def test_search_and_severity_edge_cases(client, redis, user):
    """What a scan that looks at the stored JSON before decoding it must not get wrong."""
    subscribe(redis, "bob", ["*"])
    bus = Bus(redis)
    kelvin = bus.publish("t", "Cooled to 5 \u212a")                   # KELVIN SIGN folds to k
    strasse = bus.publish("t", "Hauptstraße closed")                   # ß folds to ss
    in_data = bus.publish("t", "plain", data={"note": "needle", "severity": "critical"})
    path = bus.publish("t", "path", body="C:\\users\\needle\nline two")
    upper = bus.publish("t", "NEEDLE in caps", severity="critical")
    assert ids(client, bearer("bob"), q="5 k") == [kelvin]
    assert ids(client, bearer("bob"), q="STRASSE") == [strasse]
    assert ids(client, bearer("bob"), q="needle") == [path, upper]      # never in data
    assert ids(client, bearer("bob"), q="users\\needle") == [path]
    assert ids(client, bearer("bob"), q="needle\nline") == [path]
    assert ids(client, bearer("bob"), severity="critical") == [upper]   # data's is not its own
    assert ids(client, bearer("bob"), severity="info", q="plain") == [in_data]


def test_unread_filter_follows_the_read_state(client, redis, history):
    _, mine = history
    read_state.apply(redis, "bob", [mine[-1]["id"], mine[-3]["id"]], mine[100]["id"],
                     [mine[50]["id"]])
    state = read_state.get(redis, "bob")
    expected = _expect(mine, unread_state=state)
    assert mine[50]["id"] in expected and mine[-1]["id"] not in expected
    assert mine[101]["id"] in expected and mine[100]["id"] not in expected
    assert ids(client, bearer("bob"), unread="1", limit=1000) == expected
    assert ids(client, bearer("bob"), unread="0", limit=1000) == [n["id"] for n in mine]
    walked, _ = walk_back(client, bearer("bob"), 9, unread="1", severity="error")
    assert walked == _expect(mine, unread_state=state, severities={"error"})


# -- GET one ----------------------------------------------------------------------------

def test_get_one_of_the_feed(client, history):
    published, mine = history
    envelope = mine[5]
    reply = client.get(f"/api/notifications/{envelope['id']}", headers=bearer("bob"))
    assert reply.status_code == 200
    body = reply.get_json()
    assert body["id"] == envelope["id"] and body["title"] == envelope["title"]
    assert body["ts"] and body["topic"] == envelope["topic"]
    own = next(n for n in mine if n.get("user") == "bob")
    assert client.get(f"/api/notifications/{own['id']}", headers=bearer("bob")).status_code == 200


def test_get_one_not_in_the_feed_is_404(client, history):
    published, _ = history
    unsubscribed = next(n for n in published if n["topic"] == "news" and not n.get("user"))
    for entry_id in (unsubscribed["id"], "1-0", "99999999999999-0"):
        reply = client.get(f"/api/notifications/{entry_id}", headers=bearer("bob"))
        assert reply.status_code == 404, entry_id
        assert "error" in reply.get_json()


@pytest.mark.parametrize("entry_id", ["abc", "1-x", "0-20000000000000000000", "١-0"])
def test_get_one_with_a_bad_id_is_400(client, user, entry_id):
    reply = client.get(f"/api/notifications/{entry_id}", headers=bearer("bob"))
    assert reply.status_code == 400
    assert reply.get_json()["error"].startswith("id: ") and reply.get_json()["field"] == "id"


# -- bad parameters and credentials -------------------------------------------------

@pytest.mark.parametrize("params,field", [
    ({"limit": "0"}, "limit"),
    ({"limit": "1001"}, "limit"),
    ({"limit": "-1"}, "limit"),
    ({"after": "0", "before": "5-0"}, "before"),
    ({"before": "yesterday"}, "before"),
    ({"before": "5"}, "before"),
    ({"before": "0-20000000000000000000"}, "before"),
    ({"unread": "yes"}, "unread"),
    ({"unread": "2"}, "unread"),
    ({"severity": "fatal"}, "severity"),
    ({"severity": "error,"}, "severity"),
    ({"severity": "ERROR"}, "severity"),
    ({"topic": "Ops"}, "topic"),
    ({"topic": "ops..x"}, "topic"),
    ({"topic": "x" * 201}, "topic"),
    ({"q": "x" * 201}, "q"),
    ({"q": "   "}, "q"),
    ({"view": "trash"}, "view"),
    ({"view": ""}, "view"),
])
def test_bad_parameters_are_400_naming_the_parameter(client, user, params, field):
    reply = client.get("/api/notifications", headers=bearer("bob"), query_string=params)
    assert reply.status_code == 400, reply.get_data(as_text=True)
    body = reply.get_json()
    assert body["error"].startswith(f"{field}: ") and body["field"] == field


def test_the_longest_search_and_empty_filters_are_fine(client, user):
    assert read(client, bearer("bob"), q="x" * 200)["notifications"] == []
    assert read(client, bearer("bob"), q="", severity="", topic="")["notifications"] == []


@pytest.mark.parametrize("path", ["/api/notifications", "/api/notifications/1-0",
                                  "/api/notification-state", "/api/preferences"])
def test_every_read_needs_a_user(client, api_key, path):
    assert client.get(path).status_code == 401
    assert client.get(path, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get(path, headers={"Authorization": f"Bearer {api_key}"}).status_code == 403


@pytest.mark.parametrize("method,path,body", [
    ("post", "/api/notification-state", {"archive": ["1-0"]}),
    ("put", "/api/preferences", {"rules": []}),
])
def test_every_change_needs_a_user(client, api_key, method, path, body):
    call = getattr(client, method)
    assert call(path, json=body).status_code == 401
    assert call(path, json=body, headers={"Authorization": "Bearer nope"}).status_code == 401
    assert call(path, json=body,
                headers={"Authorization": f"Bearer {api_key}"}).status_code == 403


@pytest.mark.parametrize("params", [{"before": "0-0"},
                                    {"after": "18446744073709551615-18446744073709551615"}])
def test_a_cursor_at_either_end_of_all_ids_reads_nothing(client, history, params):
    """Redis refuses an exclusive range past either end of all ids (it answered 500)."""
    reply = client.get("/api/notifications", query_string=params, headers=bearer("bob"))
    assert reply.status_code == 200, reply.get_json()
    assert reply.get_json()["notifications"] == []
