"""A user's feed over REST: read it (pages, filters, search), open one notification,
archive and snooze (see app/users/archive_and_snooze.py; read state is in routes.py).

``GET /api/notifications`` takes ``after`` (0: from the start of history) or
``before`` (older than that id: the next page back), ``limit``, and filters:
``unread=1``, ``severity=warning,error``, ``topic=<prefix>``, ``q=<text>``
(in the title or body, any case, within the retained history), and
``view=archived`` or ``view=snoozed`` (the feed leaves those out, and the topics
the user muted: a "mute" rule in their preferences), and ``kind``: ``alert`` (the
default: the inbox), ``data`` (only the ``kind: "data"`` events, records that
changed, which the inbox never shows) or ``all`` (both).
"""
from flask import jsonify, request

from app.stream import history, sharded_history
from app.stream.envelope import (
    SEVERITIES,
    EnvelopeError,
    check_cursor,
    check_stream_id,
    check_topic_prefix,
    restrict,
)
from app.stream.filters import KINDS
from app.stream.shards import configured as configured_shards
from app.users import archive_and_snooze, preferences, read_state, subscriptions
from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp
from app.web.api.errors import fails_fast_while_redis_is_down
from app.web.auth import scope

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
MAX_QUERY = 200
VIEWS = ("feed", "archived", "snoozed")


def _limit():
    raw = request.args.get("limit")
    if raw is None:
        return DEFAULT_LIMIT
    # ASCII digits only: str.isdigit() also takes "²", which int() refuses.
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_LIMIT:
        raise EnvelopeError("limit", f"must be a whole number from 1 to {MAX_LIMIT}")
    return int(raw)


def _filter(client, user):
    """The Filter the query string asks for; raises EnvelopeError naming the parameter."""
    args = request.args
    unread = args.get("unread")
    if unread not in (None, "0", "1"):
        raise EnvelopeError("unread", "must be 1 or 0")
    severities = None
    if args.get("severity"):
        severities = set(args["severity"].split(","))
        if not severities <= set(SEVERITIES):
            raise EnvelopeError("severity", "must be a comma-separated list of "
                                + ", ".join(SEVERITIES))
    topic = args.get("topic") or None
    if topic is not None:
        check_topic_prefix(topic)
    text = args.get("q") or None
    if text is not None and (len(text) > MAX_QUERY or not text.strip()):
        raise EnvelopeError("q", f"must be 1-{MAX_QUERY} characters")
    kind = args.get("kind", "alert")
    if kind not in KINDS:
        raise EnvelopeError("kind", "must be alert, data or all")
    view = args.get("view", "feed")
    if view not in VIEWS:
        raise EnvelopeError("view", "must be one of " + ", ".join(VIEWS))
    archived, snoozed = archive_and_snooze.hidden(client, user)
    hidden, only = (archived | snoozed, None) if view == "feed" else \
        ((), archived if view == "archived" else snoozed)
    # The inbox leaves muted topics out (a mute rule of the user's preferences).
    mutes = preferences.mute_rules(preferences.get(client, user)) if view == "feed" else ()
    return history.Filter(unread=read_state.get(client, user) if unread == "1" else None,
                          severities=severities, topic=topic, text=text and text.strip(),
                          hidden=hidden, only=only, mutes=mutes, kind=kind)


@bp.get("/api/notifications")
@access.users()
def list_notifications(who):
    """The caller's feed in id order: after ``after`` if given (0: from the start of
    history), else the newest ``limit`` (older than ``before``, if given). A
    host-app token limited to some topic prefixes reads only those (and what is
    private to its user).

    Also ``last_id``: the cursor this read reached (None for an empty history), and
    ``next_before``: where the next page back starts (None at the start of history);
    with a sharded history (STREAM_SHARDS > 1) both are one position per shard
    (app/stream/sharded_history.py), else a stream id.
    """
    client, shards = extensions.redis(), configured_shards()
    try:
        limit = _limit()
        after, before = request.args.get("after"), request.args.get("before")
        if after is not None and before is not None:
            raise EnvelopeError("before", "cannot be given with after")
        if after is not None:
            after = check_cursor(after, "after")
        if before is not None:
            before = check_cursor(before, "before") if shards.count > 1 else \
                check_stream_id(before, "before")
        wanted = _filter(client, who.name)
    except EnvelopeError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
    topics = restrict(subscriptions.list_topics(client, who.name), who.topics)
    next_before = None
    if shards.count > 1:  # a sharded history: every cursor one position per shard
        if after is None:
            found, cursor, next_before = sharded_history.feed_latest(
                client, shards, who.name, topics, limit, wanted,
                before and shards.parse(before)[0])
        else:
            found, cursor = sharded_history.feed_after(client, shards, who.name, topics,
                                                       shards.parse(after)[0], limit, wanted)
    elif after is None:
        found, cursor, next_before = history.feed_latest(client, who.name, topics, limit,
                                                         wanted, before)
    else:
        found, cursor = history.feed_after(client, who.name, topics, after, limit, wanted)
    # `last_id` is where this read stopped in the stream: connecting (or
    # reading again) with it as `after`/`last_id` misses nothing.
    return jsonify(notifications=found, last_id=cursor, next_before=next_before)


@bp.get("/api/notifications/<entry_id>")
@access.users()
def get_notification(who, entry_id):
    """One notification of the caller's feed (404 when it is not theirs to see, or gone)."""
    try:
        check_stream_id(entry_id, "id")
    except EnvelopeError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
    client = extensions.redis()
    topics = restrict(subscriptions.list_topics(client, who.name), who.topics)
    envelope = history.one(client, who.name, topics, entry_id)
    if envelope is None:
        return jsonify(error="no such notification in your feed (or it is past the "
                             "retained history)"), 404
    return jsonify(envelope)


@bp.get("/api/notification-state")
@access.users()
def get_state(who):
    """``{"archived": [ids], "snoozed": {id: until_ms}}``: what the caller set aside
    (a topic-limited token: of the notifications it may see)."""
    client = extensions.redis()
    state = archive_and_snooze.get(client, who.name)
    if who.topics is not None:
        state["archived"] = scope.visible(client, who.name, who.topics, state["archived"])
        kept = set(scope.visible(client, who.name, who.topics, state["snoozed"]))
        state["snoozed"] = {i: t for i, t in state["snoozed"].items() if i in kept}
    return jsonify(state)


@bp.post("/api/notification-state")
@fails_fast_while_redis_is_down
@access.users()
def change_state(who):
    """Archive, bring back, snooze or wake: ``{"archive": [ids]}``, ``{"unarchive":
    [ids]}``, ``{"snooze": {"id": ID, "until": ms}}`` or ``{"snooze": {"ids": [ids],
    "until": ms}}``, ``{"unsnooze": ID}`` or ``{"unsnooze": [ids]}`` (one of them;
    a list is a bulk action, 1-500 ids, one request). Every tab of the caller is
    told (a ``state`` event)."""
    body = request.get_json(silent=True)
    actions = ("archive", "unarchive", "snooze", "unsnooze")
    if not isinstance(body, dict) or len(body) != 1 or next(iter(body)) not in actions:
        return jsonify(error="body: must be one of " + ", ".join(
            f'{{"{a}": ...}}' for a in actions), field="body"), 400
    (action, value), = body.items()
    client = extensions.redis()
    if who.topics is not None:  # only ids it may see (a bad shape is the 400 below)
        chosen = value.get("ids", value.get("id")) if action == "snooze" and isinstance(value, dict) \
            else value
        scope.check(client, who.name, who.topics,
                    chosen if isinstance(chosen, list) else [chosen], action)
    try:
        if action in ("archive", "unarchive"):
            change = archive_and_snooze.archive(client, who.name, value, archived=action == "archive")
        elif action == "snooze":
            if not isinstance(value, dict) or set(value) not in ({"id", "until"}, {"ids", "until"}):
                raise archive_and_snooze.StateError(
                    "snooze", 'must be {"id": ID, "until": ms} or {"ids": [ID, ...], "until": ms}')
            chosen = value["ids"] if "ids" in value else value["id"]
            change = archive_and_snooze.snooze(client, who.name, chosen, value["until"])
        else:
            change = archive_and_snooze.unsnooze(client, who.name, value)
    except archive_and_snooze.StateError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
    return jsonify(change)



@bp.get("/api/preferences")
@access.account()
def get_preferences(who):
    """How the caller wants to be told (see app/users/preferences.py)."""
    return jsonify(preferences.get(extensions.redis(), who.name))


@bp.put("/api/preferences")
@fails_fast_while_redis_is_down
@access.account()
def put_preferences(who):
    """Replace the caller's preferences; their email digests follow at once."""
    try:
        return jsonify(preferences.put(extensions.redis(), who.name,
                                       request.get_json(silent=True), who.topics))
    except preferences.PreferenceError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
