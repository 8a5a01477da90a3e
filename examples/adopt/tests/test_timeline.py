"""Posts: each commit publishes the post's data event and one timeline refresh; the
timeline page carries what a page needs to go live; times are the reader's own."""
from datetime import datetime

from chirp.extensions import db, herald
from chirp.models import Post


def test_a_post_publishes_its_record_and_a_timeline_refresh(app, users, sign_in):
    alice = sign_in("alice")
    with herald.record() as sent:
        alice.post("/posts", data={"body": "Hello, Chirp"})
    assert sent.topics == ["posts.created", "timeline.refresh"]
    record = sent[0]["data"]
    assert (record["body"], record["author_id"]) == ("Hello, Chirp", users["alice"][0])
    assert sent[0]["kind"] == "data" and isinstance(record["id"], int)
    assert sent[1]["data"] == {"stream": "timeline"}

    with herald.record() as sent:
        alice.post(f"/posts/{record['id']}/delete")
    assert sent.topics == ["posts.deleted", "timeline.refresh"]


def test_an_empty_post_publishes_nothing(app, sign_in):
    alice = sign_in("alice")
    with herald.record() as sent:
        alice.post("/posts", data={"body": ""})
    assert sent == []


def test_renaming_yourself_refreshes_timelines_and_publishes_no_user_record(app, sign_in):
    bob = sign_in("bob")
    with herald.record() as sent:
        bob.post("/settings", data={"display_name": "Robert", "timezone": "UTC"})
    assert sent.topics == ["timeline.refresh"]  # no record of a user: no password hash anywhere


def test_the_timeline_page_goes_live_by_itself(app, sign_in):
    page = sign_in("bob").get("/").get_data(as_text=True)
    assert '<meta name="herald-refresh" content="timeline">' in page
    assert '<script src="/herald/herald.js"></script>' in page  # from Chirp, not from Herald
    assert 'id="herald-connect"' in page and "/static/live.js" in page
    assert 'id="today-data"' in page and "/static/today.js" in page


def test_times_are_shown_in_the_readers_zone(app, users, sign_in):
    with app.app_context():
        db.session.add(Post(body="New year", author_id=users["alice"][0],
                            created_at=datetime(2030, 1, 1, 12, 0)))
        db.session.commit()
    bob_page = sign_in("bob").get("/").get_data(as_text=True)      # America/New_York
    carol_page = sign_in("carol").get("/").get_data(as_text=True)  # Asia/Tokyo
    assert '<time datetime="2030-01-01T07:00:00-05:00">01 Jan 2030, 07:00</time>' in bob_page
    assert '<time datetime="2030-01-01T21:00:00+09:00">01 Jan 2030, 21:00</time>' in carol_page


def test_the_counter_starts_from_todays_posts(app, users, sign_in):
    alice = sign_in("alice")
    alice.post("/posts", data={"body": "today"})
    page = alice.get("/").get_data(as_text=True)
    assert '<span id="today-count">1</span>' in page
