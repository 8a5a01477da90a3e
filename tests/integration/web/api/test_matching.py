"""/api/notification-state/matching: a count and a bulk action on everything that
matches a view, by filter on the server (more than the page's 1,000 rows), with an
Undo that restores exactly what the action changed (issue 38, point 11)."""
import time

import pytest

from app.stream.publish import Bus
from app.users import archive_and_snooze, bulk_by_filter, read_state
from tests.unit.web.api.helpers import bearer, ids, subscribe, walk_back

URL = "/api/notification-state/matching"
NO = object()  # no "until" in the body


@pytest.fixture
def published(redis, user):
    subscribe(redis, "bob", ["ops", "crm"])
    bus = Bus(redis)
    return {"ops": [bus.publish("ops.x", f"o{i}", severity="error" if i % 2 else "info")
                    for i in range(6)],
            "crm": [bus.publish("crm.lead", f"c{i}") for i in range(3)],
            "run": [bus.publish("ops.job.started", "run", correlation_id="r1")]}


def count(client, name="bob", **params):
    reply = client.get(URL, headers=bearer(name), query_string=params)
    assert reply.status_code == 200, reply.get_data(as_text=True)
    return reply.get_json()


def act(client, action, name="bob", body_until=NO, **params):
    body = {"action": action} if body_until is NO else {"action": action, "until": body_until}
    return client.post(URL, headers=bearer(name), query_string=params, json=body)


def undo(client, token, name="bob"):
    return client.post(URL + "/undo", headers=bearer(name), json={"undo": token})


def test_counts_what_the_view_shows_by_filter_and_tab(client, published):
    assert count(client) == {"count": 10, "more": False, "most": bulk_by_filter.MAX_MATCHING}
    assert count(client, topic="crm")["count"] == 3
    assert count(client, severity="error")["count"] == 3
    assert count(client, q="o1")["count"] == 1
    assert count(client, tab="activity")["count"] == 1  # the run's step
    assert count(client, tab="inbox")["count"] == 9


def test_archive_by_filter_then_undo_restores_exactly_what_it_changed(client, redis, published):
    before = archive_and_snooze.archive(redis, "bob", [published["ops"][0]])["archived"]
    reply = act(client, "archive", severity="error")
    assert reply.status_code == 200
    done = reply.get_json()
    assert done["action"] == "archive" and done["count"] == 3 and done["more"] is False
    assert set(ids(client, bearer("bob"), view="archived")) == {
        published["ops"][i] for i in (0, 1, 3, 5)}
    back = undo(client, done["undo"])
    assert back.status_code == 200 and back.get_json() == {"action": "unarchive", "count": 3}
    # What was archived before the action stays archived: only its own changes went back.
    assert ids(client, bearer("bob"), view="archived") == before
    again = undo(client, done["undo"])
    assert again.status_code == 404 and again.get_json()["field"] == "undo"


def test_mark_read_by_filter_and_undo_leaves_earlier_reads_alone(client, redis, published):
    read_state.mark(redis, "bob", {"ids": [published["crm"][0]]})
    done = act(client, "read", topic="crm").get_json()
    assert done["count"] == 2  # the one read already is not counted, nor kept for Undo
    state = read_state.get(redis, "bob")
    assert all(read_state.is_read(state, i) for i in published["crm"])
    assert not read_state.is_read(state, published["ops"][0])
    assert undo(client, done["undo"]).get_json() == {"action": "unread", "count": 2}
    state = read_state.get(redis, "bob")
    assert read_state.is_read(state, published["crm"][0])
    assert not any(read_state.is_read(state, i) for i in published["crm"][1:])


def later(minutes):
    """A snooze time ``minutes`` from now, in ms."""
    return int(time.time() * 1000) + minutes * 60_000


def test_snooze_by_filter_then_undo_puts_back_exactly_what_it_changed(client, redis, published):
    early, same, until = later(30), later(90), later(60)
    ops = published["ops"]
    archive_and_snooze.snooze(redis, "bob", [ops[0]], early)  # in the snoozed view
    archive_and_snooze.snooze(redis, "bob", [ops[2]], same)
    archive_and_snooze.snooze(redis, "bob", [published["crm"][0]], early)  # another view's
    reply = act(client, "snooze", topic="ops", view="snoozed", body_until=until)
    assert reply.status_code == 200, reply.get_json()
    # Of the view (ops, snoozed: ops[0] and ops[2]), both get the new time.
    assert reply.get_json()["count"] == 2
    # The inbox's ops (1, 3, 4, 5; not the run's step): the last action, whose Undo is kept.
    done = act(client, "snooze", topic="ops", tab="inbox", body_until=until).get_json()
    assert done["action"] == "snooze" and done["count"] == 4
    snoozed = archive_and_snooze.get(redis, "bob")["snoozed"]
    assert {i: snoozed[i] for i in ops} == {i: until for i in ops}
    assert ids(client, bearer("bob"), topic="ops") == [published["run"][0]]
    assert undo(client, done["undo"]).get_json() == {"action": "unsnooze", "count": 4}
    snoozed = archive_and_snooze.get(redis, "bob")["snoozed"]
    assert snoozed == {ops[0]: until, ops[2]: until, published["crm"][0]: early}


def test_undo_of_a_snooze_gives_the_ids_snoozed_before_their_earlier_time(client, redis, published):
    ops, early, until = published["ops"], later(30), later(60)
    archive_and_snooze.snooze(redis, "bob", ops[:2], early)
    archive_and_snooze.snooze(redis, "bob", [ops[2]], until)  # the same time: not changed
    done = act(client, "snooze", topic="ops", view="snoozed", body_until=until).get_json()
    assert done["count"] == 2
    assert undo(client, done["undo"]).get_json() == {"action": "unsnooze", "count": 2}
    assert archive_and_snooze.get(redis, "bob")["snoozed"] == {ops[0]: early, ops[1]: early,
                                                               ops[2]: until}


@pytest.mark.parametrize("until", [None, "tomorrow", 1.5, True, -1, 0, "later(400 days)"])
def test_a_bad_until_is_400_naming_it_and_snoozes_nothing(client, redis, published, until):
    if until == "later(400 days)":
        until = later(400 * 24 * 60)
    elif until == 0:
        until = later(-1)  # in the past
    reply = act(client, "snooze", body_until=until)
    assert reply.status_code == 400 and reply.get_json()["field"] == "until", reply.get_json()
    assert archive_and_snooze.get(redis, "bob")["snoozed"] == {}
    assert act(client, "snooze").status_code == 400, "a snooze needs its until"
    assert act(client, "read", body_until=later(5)).status_code == 400, "only a snooze has one"


@pytest.mark.parametrize("params, field", [
    ({"severity": "loud"}, "severity"), ({"unread": "yes"}, "unread"),
    ({"topic": "Bad Topic"}, "topic"), ({"view": "trash"}, "view"), ({"tab": "mine"}, "tab"),
    ({"q": " "}, "q"), ({"kind": "any"}, "kind")])
def test_bad_filter_input_is_400_naming_the_field(client, redis, published, params, field):
    for reply in (client.get(URL, headers=bearer("bob"), query_string=params),
                  act(client, "archive", **params)):
        assert reply.status_code == 400 and reply.get_json()["field"] == field, reply.get_json()
    assert archive_and_snooze.get(redis, "bob")["archived"] == [], "nothing changed"


@pytest.mark.parametrize("body", [None, {}, {"action": "delete"}, {"action": "read", "x": 1},
                                  ["read"]])
def test_a_bad_body_is_400_naming_action(client, published, body):
    reply = client.post(URL, headers=bearer("bob"), json=body)
    assert reply.status_code == 400 and reply.get_json()["field"] == "action"


def test_undo_needs_a_token_of_the_callers_last_action(client, redis, published, admin):
    subscribe(redis, "ada", ["ops"])
    done = act(client, "archive", topic="ops").get_json()
    assert undo(client, 42).status_code == 400
    assert undo(client, "not-the-token").status_code == 404
    assert undo(client, done["undo"], name="ada").status_code == 404, "another user's"
    assert undo(client, done["undo"]).get_json()["count"] == 7  # still there: not spent


def test_an_api_key_is_refused_and_no_credentials_is_401(client, published, api_key):
    reply = client.post(URL, headers={"Authorization": f"Bearer {api_key}"},
                        json={"action": "read"})
    assert reply.status_code == 403
    assert client.get(URL).status_code == 401


def test_two_thousand_five_hundred_archived_then_all_restored_by_undo(client, redis, user):
    subscribe(redis, "bob", ["bulk"])
    bus = Bus(redis)
    sent = [bus.publish("bulk.item", f"b{i}") for i in range(2500)]
    assert count(client)["count"] == 2500
    done = act(client, "archive").get_json()
    assert done["count"] == 2500 and done["more"] is False
    assert ids(client, bearer("bob"), limit=10) == []
    archived, _pages = walk_back(client, bearer("bob"), 1000, view="archived")
    assert archived == sent
    assert undo(client, done["undo"]).get_json() == {"action": "unarchive", "count": 2500}
    assert archive_and_snooze.get(redis, "bob")["archived"] == []
    assert walk_back(client, bearer("bob"), 1000)[0] == sent


def test_past_the_bound_it_takes_the_newest_and_says_more(client, redis, user, monkeypatch):
    monkeypatch.setattr(bulk_by_filter, "MAX_MATCHING", 4)
    subscribe(redis, "bob", ["ops"])
    bus = Bus(redis)
    sent = [bus.publish("ops.x", f"n{i}") for i in range(6)]
    assert count(client)["more"] is True
    done = act(client, "read").get_json()
    assert done["count"] == 4 and done["more"] is True
    state = read_state.get(redis, "bob")
    assert [read_state.is_read(state, i) for i in sent] == [False, False, True, True, True, True]


def test_rows_count_as_the_inbox_groups_them_unread_and_by_tab(client, redis, user):
    """``rows=1``: one row per run, or per topic and title ("×8"), as feed-view.js's key;
    what the inbox's counters ask (unread=1, tab inbox/foryou) when not all is loaded."""
    subscribe(redis, "bob", ["ops"])
    bus = Bus(redis)
    same = [bus.publish("ops.disk", "Disk full") for _ in range(8)]  # one row "×8"
    other = [bus.publish("ops.x", f"o{i}") for i in range(3)]       # three rows
    bus.publish("ops.job.started", "run", correlation_id="r1")      # Activity: not counted
    bus.publish("ops.job.progress", "run", correlation_id="r1")
    mine = bus.publish("ops.x", "private", user="bob")
    assert count(client, tab="inbox")["count"] == 12  # notifications, as before
    assert count(client, unread="1", rows="1", tab="inbox") == {
        "count": 5, "more": False, "most": bulk_by_filter.MAX_MATCHING}
    assert count(client, unread="1", rows="1", tab="foryou")["count"] == 1
    assert count(client, rows="1", tab="activity")["count"] == 1
    read_state.apply(redis, "bob", same[:7] + other[:1] + [mine], None, [])
    assert count(client, unread="1", rows="1", tab="inbox")["count"] == 3  # one of 8 unread: a row
    assert count(client, unread="1", rows="1", tab="foryou")["count"] == 0
    reply = client.get(URL, headers=bearer("bob"), query_string={"rows": "2"})
    assert reply.status_code == 400 and reply.get_json()["field"] == "rows"
