"""Per-user read state's Socket.IO event, on a live server: every tab of the user hears it,
nobody else does (the module and its REST endpoints: tests/unit/users/test_read_state.py)."""
from app.stream.publish import Bus
from app.users import accounts
from tests.support import Listener, wait_until


def test_read_event_reaches_every_tab_of_the_user_only(live_server, redis):
    accounts.create_user(redis, "ann", "ann-password")
    accounts.create_user(redis, "ben", "ben-password")
    ann_token = live_server.token("ann", "ann-password")
    tab1, tab2 = Listener(live_server, ann_token), Listener(live_server, ann_token)
    ben = Listener(live_server, live_server.token("ben", "ben-password"))
    try:
        sent = Bus(redis).publish("x", "for ann", user="ann")
        ack = tab1.call("read", {"ids": [sent]})
        assert ack == {"ok": True, "upto": None, "ids": [sent], "unread": [], "seen": None, "version": 1}
        wait_until(lambda: tab1.reads and tab2.reads, message="read events in both tabs")
        assert tab2.reads == [{"upto": None, "ids": [sent], "unread": [], "seen": None, "version": 1}]
        assert tab1.call("read", {"ids": "nope"})["ok"] is False
        # ben's own change reaches him after any of ann's that were misrouted would have.
        assert ben.call("read", {"upto": sent})["ok"]
        wait_until(lambda: ben.reads, message="ben's own read event")
        assert ben.reads == [{"upto": sent, "ids": [], "unread": [], "seen": None, "version": 1}]
    finally:
        for listener in (tab1, tab2, ben):
            listener.close()
