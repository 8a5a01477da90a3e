"""``kind`` over REST: publishing data events (single, batch, CLI), and
GET /api/notifications leaving them out of the inbox unless ``kind=data|all``."""
import orjson
import pytest

from app.stream.keys import STREAM
from app.stream.publish import Bus
from app.users import read_state
from tests.unit.web.api.helpers import bearer, ids, read, subscribe, walk_back


def key_header(api_key):
    return {"Authorization": f"Bearer {api_key}"}


# -- publishing -----------------------------------------------------------------------

def test_a_data_event_is_published_with_kind_first(client, redis, api_key):
    reply = client.post("/api/notifications", headers=key_header(api_key), json={
        "topic": "board.card.updated", "title": "Card 7", "kind": "data",
        "data": {"id": 7, "version": 2}})
    assert reply.status_code == 201
    [(entry_id, fields)] = redis.xrange(STREAM)
    assert fields[b"envelope"].startswith(b'{"kind":"data",')
    assert orjson.loads(fields[b"envelope"])["data"] == {"id": 7, "version": 2}


@pytest.mark.parametrize("path, body, field", [
    ("/api/notifications", {"topic": "a", "title": "t", "kind": "notice"}, "kind"),
    ("/api/notifications", {"topic": "a", "title": "t", "kind": None}, "kind"),
    ("/api/notifications/batch", {"notifications": [{"topic": "a", "title": "t"},
                                                    {"topic": "a", "title": "t", "kind": 1}]},
     "notifications[1].kind"),
])
def test_a_bad_kind_is_400_naming_it_and_stores_nothing(client, redis, api_key, path, body,
                                                       field):
    reply = client.post(path, headers=key_header(api_key), json=body)
    assert reply.status_code == 400
    assert reply.get_json()["field"] == field
    assert reply.get_json()["error"] == f"{field}: must be alert or data"
    assert redis.exists(STREAM) == 0


def test_the_cli_publishes_a_data_event(runner, redis):
    done = runner.invoke(args=["notify", "board.card", "Card 7", "--kind", "data",
                               "--data", '{"id": 7}'])
    assert done.exit_code == 0, done.output
    [(entry_id, fields)] = redis.xrange(STREAM)
    assert entry_id.decode() == done.output.strip()
    assert fields[b"envelope"].startswith(b'{"kind":"data",')
    refused = runner.invoke(args=["notify", "board.card", "Card 7", "--kind", "datum"])
    assert refused.exit_code != 0 and "datum" in refused.output


def test_the_cli_refuses_a_bad_kind_in_json_lines(runner, redis):
    lines = '{"topic": "a", "title": "t", "kind": "data"}\n{"topic": "a", "title": "t", "kind": "x"}\n'
    done = runner.invoke(args=["notify", "--stdin"], input=lines)
    assert done.exit_code != 0
    assert "line 2: kind: must be alert or data" in done.output
    assert redis.exists(STREAM) == 0


# -- reading --------------------------------------------------------------------------

@pytest.fixture
def mixed(redis, user):
    """bob subscribes to board; 30 notifications alternate alert/data (a third with an
    explicit "alert", some alerts with data holding kind: data), two private to bob."""
    subscribe(redis, "bob", ["board"])
    bus = Bus(redis)
    published = []
    for index in range(30):
        fields = {}
        kind = "data" if index % 2 else "alert"
        if kind == "data" or index % 3 == 0:
            fields["kind"] = kind
        if index % 4 == 0:
            fields["data"] = {"kind": "data", "n": index}
        if index in (5, 6):
            fields["user"] = "bob"
        entry_id = bus.publish(f"board.card.{index}", f"card {index}", **fields)
        published.append({"id": entry_id, "kind": kind})
    bus.publish("other.card", "not bob's", kind="data")
    bus.publish("board.card", "eve's", kind="data", user="eve")
    return published


def of(published, *kinds):
    return [n["id"] for n in published if n["kind"] in kinds]


def test_the_inbox_leaves_data_events_out_by_default(client, mixed):
    assert ids(client, bearer("bob")) == of(mixed, "alert")
    assert ids(client, bearer("bob"), kind="alert") == of(mixed, "alert")
    assert ids(client, bearer("bob"), after="0") == of(mixed, "alert")
    for envelope in read(client, bearer("bob"))["notifications"]:
        assert "kind" not in envelope


def test_kind_data_reads_only_data_events(client, mixed):
    assert ids(client, bearer("bob"), kind="data") == of(mixed, "data")
    body = read(client, bearer("bob"), kind="data", after="0")
    assert [n["id"] for n in body["notifications"]] == of(mixed, "data")
    assert all(list(n)[:2] == ["id", "kind"] and n["kind"] == "data"
               for n in body["notifications"])


def test_kind_all_reads_both(client, mixed):
    assert ids(client, bearer("bob"), kind="all") == of(mixed, "alert", "data")


@pytest.mark.parametrize("kind, kinds", [(None, ("alert",)), ("data", ("data",)),
                                         ("all", ("alert", "data"))])
@pytest.mark.parametrize("limit", [1, 4])
def test_paging_back_and_forth_stays_within_the_kind(client, mixed, kind, kinds, limit):
    params = {"kind": kind} if kind else {}
    wanted = of(mixed, *kinds)
    walked, _ = walk_back(client, bearer("bob"), limit, **params)
    assert walked == wanted
    forward, after = [], "0"
    while True:
        body = read(client, bearer("bob"), after=after, limit=limit, **params)
        forward += [n["id"] for n in body["notifications"]]
        if not body["notifications"]:
            break
        after = body["last_id"]
    assert forward == wanted


def test_unread_applies_within_the_kind(client, redis, mixed):
    alerts, data = of(mixed, "alert"), of(mixed, "data")
    read_state.apply(redis, "bob", [alerts[-1], data[-1]], alerts[3])
    state = read_state.get(redis, "bob")
    unread = [i for i in of(mixed, "alert", "data") if not read_state.is_read(state, i)]
    assert ids(client, bearer("bob"), unread="1") == [i for i in unread if i in alerts]
    assert ids(client, bearer("bob"), unread="1", kind="data") == [i for i in unread if i in data]
    assert ids(client, bearer("bob"), unread="1", kind="all") == unread


@pytest.mark.parametrize("kind", ["", "Data", "alerts", "both", "data,alert"])
def test_a_bad_kind_query_is_400_naming_it(client, mixed, kind):
    reply = client.get("/api/notifications", headers=bearer("bob"), query_string={"kind": kind})
    assert reply.status_code == 400
    assert reply.get_json() == {"error": "kind: must be alert, data or all", "field": "kind"}
