"""``GET /api/topics``: the topics of the recent history a user may see, with how many
notifications each has, so that the subscription box can suggest real names instead
of leaving a new user to guess them.

The counts come from the process's tally of the newest notifications
(app/stream/topics.py); ``scanned`` says how many it covers. The tally is made
on the first request, once per app, and kept in ``app.extensions``.
"""
from flask import jsonify

from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp


def _counts():
    return extensions.herald().topic_counts


@bp.get("/api/topics")
@access.users()
def list_topics(who):
    """``{"topics": [{"topic", "count", "newest"}], "prefixes": [{"prefix", "count",
    "newest"}], "scanned", "since", "truncated"}``: public notifications and the
    caller's own private ones among the newest scanned; a host-app token limited to
    some prefixes sees only topics inside them."""
    return jsonify(_counts().view(extensions.redis(), who.name, who.topics))
