"""A private message: its alert goes to the recipient's user id with the message's own
commit, and the badge counts what is unread."""
import jwt

from chirp.extensions import db, herald
from chirp.models import Message, User


def test_a_message_alerts_its_recipient_by_id(app, users, sign_in):
    alice = sign_in("alice")
    bob_id = users["bob"][0]
    with herald.record() as sent:
        reply = alice.post("/messages", data={"to": bob_id, "body": "Lunch at noon?"})
    assert reply.status_code == 302
    assert sent.topics == ["messages.new"]
    alert = sent[0]
    assert alert["user"] == str(bob_id)
    assert alert["title"] == "New message from Alice"
    assert alert["url"] == "http://chirp.test/messages"  # HERALD_APP_URL's: Chirp's own page


def test_a_message_refused_alerts_nobody(app, users, sign_in):
    alice = sign_in("alice")
    with herald.record() as sent:
        reply = alice.post("/messages", data={"to": users["bob"][0], "body": "  "})
    assert reply.status_code == 302
    assert sent == []
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count(Message.id))) == 0


def test_the_badge_counts_unread_messages_until_they_are_read(app, users, sign_in):
    alice, bob = sign_in("alice"), sign_in("bob")
    assert bob.get("/messages/badge").get_data(as_text=True).strip() == ""
    for body in ("one", "two"):
        alice.post("/messages", data={"to": users["bob"][0], "body": body})
    badge = bob.get("/messages/badge").get_data(as_text=True)
    assert '<span class="count">2</span>' in badge
    page = bob.get("/").get_data(as_text=True)
    assert 'hx-trigger="herald:messages.new from:body"' in page
    assert '<span class="count">2</span>' in page
    assert "two" in bob.get("/messages").get_data(as_text=True)
    assert bob.get("/messages/badge").get_data(as_text=True).strip() == ""


def test_herald_knows_a_user_by_id_whatever_their_name(app, users, sign_in):
    """The token's sub is the primary key: renaming oneself changes nothing for Herald."""
    bob = sign_in("bob")
    bob.post("/settings", data={"display_name": "Robert", "timezone": "Europe/Berlin"})
    with app.app_context():
        assert db.session.get(User, users["bob"][0]).display_name == "Robert"
    token = bob.get("/herald/token").get_json()["token"]
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["sub"] == str(users["bob"][0])
    assert claims["topics"] == ["posts", "timeline"]
    assert app.test_client().get("/herald/token").status_code == 401
