"""Everything matching a view, by filter, on the server: GitHub's "select all N
matching". The page loads at most 1,000 rows; these act on all that match.

- ``GET /api/notification-state/matching?<filters>``: ``{"count": N, "more": bool}``,
  how many of the caller's notifications match the view (``more``: over the
  bound, MAX_MATCHING, so N is that bound); with ``rows=1``, N counts rows as the
  inbox shows them (the notifications of one run, or of one topic and title, are one
  row "×8": static/js/views/feed-view.js, ``key``), among the MAX_MATCHING newest
  that match (``more``: there are more rows than N). The page's counters ask
  ``unread=1&rows=1&tab=inbox`` (or ``foryou``): a row counts when one of its
  notifications is unread and of the tab (static/js/collections/unread-total.js);
- ``POST /api/notification-state/matching?<filters>`` ``{"action": "read"|"archive"
  |"unarchive"}`` or ``{"action": "snooze", "until": ms}`` (``until`` checked as the
  snooze of ``/api/notification-state``: 400 naming ``until``): the action on the
  newest MAX_MATCHING that match,
  ``{"action", "count", "more", "undo"}`` (``count``: how many it changed, ``undo``:
  a token for the endpoint below, None when nothing changed);
- ``POST /api/notification-state/matching/undo`` ``{"undo": TOKEN}``: exactly what
  that action changed, changed back, once (a snooze: ids snoozed before get their
  earlier time back): ``{"action", "count"}``; 404 when there
  is nothing to undo under the token (used, replaced by a newer action, expired).

The filters are those of ``GET /api/notifications`` (``view``, ``unread``,
``severity``, ``topic``, ``q``, ``kind``; app/web/api/feed.py checks them the same
way: 400 naming the field), plus ``tab``: ``inbox`` (what is not Activity),
``foryou`` (private to the caller) or ``activity`` (machine steps: public,
info or success, of a run or a ``.started``/``.progress``/... topic), the inbox's
tabs (static/js/models/notification.js, ``isActivity``). Who may call them, and
how they answer errors and an unreachable Redis, are as for ``/api/notification-state``.
The undo data's bound and lifetime: app/users/bulk_by_filter.py.
"""
import re

from flask import jsonify, request

from app.stream import history, sharded_history
from app.stream.envelope import EnvelopeError, restrict
from app.stream.shards import configured as configured_shards
from app.users import archive_and_snooze, bulk_by_filter, subscriptions
from app.web import extensions
from app.web.api import access
from app.web.api.blueprint import bp
from app.web.api.errors import fails_fast_while_redis_is_down
from app.web.api.feed import MAX_LIMIT, _filter

TABS = ("inbox", "foryou", "activity")
MACHINE_STEP = re.compile(r"\.(started|progress|running|queued|heartbeat)$")


def is_activity(envelope):
    """Machine chatter, the inbox's Activity tab (as herald.isActivity decides)."""
    return (not envelope.get("user") and envelope.get("severity", "info") in ("info", "success")
            and bool(envelope.get("correlation_id") or MACHINE_STEP.search(envelope["topic"])))


def _tab():
    tab = request.args.get("tab") or None
    if tab is not None and tab not in TABS:
        raise EnvelopeError("tab", "must be one of " + ", ".join(TABS))
    return tab


def _in_tab(envelope, tab):
    if tab == "activity":
        return is_activity(envelope)
    if tab == "foryou":
        return bool(envelope.get("user"))
    return tab is None or not is_activity(envelope)


def matching_envelopes(client, who, wanted, tab, most=None):
    """The caller's notifications that match (newest first, at most ``most``, by
    default MAX_MATCHING) and whether more matched: read back page by page, as the
    feed reads them."""
    most = most or bulk_by_filter.MAX_MATCHING
    topics = restrict(subscriptions.list_topics(client, who.name), who.topics)
    shards = configured_shards()
    envelopes, before = [], None
    while len(envelopes) <= most:
        if shards.count > 1:
            found, _end, before = sharded_history.feed_latest(
                client, shards, who.name, topics, MAX_LIMIT, wanted,
                before and shards.parse(before)[0])
        else:
            found, _end, before = history.feed_latest(client, who.name, topics, MAX_LIMIT,
                                                      wanted, before)
        envelopes += [e for e in reversed(found) if _in_tab(e, tab)]
        if before is None:
            break
    return envelopes[:most], len(envelopes) > most


def matching_ids(client, who, wanted, tab, most=None):
    """The ids of :func:`matching_envelopes`, and whether more matched."""
    envelopes, more = matching_envelopes(client, who, wanted, tab, most)
    return [e["id"] for e in envelopes], more


def row_key(envelope):
    """The row the inbox shows a notification in (herald.rowKey): its run's,
    or that of its topic and title."""
    run = envelope.get("correlation_id")
    return ("run", run) if run else ("same", envelope["topic"], envelope.get("title"))


def _rows():
    rows = request.args.get("rows")
    if rows not in (None, "0", "1"):
        raise EnvelopeError("rows", "must be 1 or 0")
    return rows == "1"


def _matching(client, who):
    """The view's ids and ``more``; raises EnvelopeError naming a bad parameter."""
    wanted, tab = _filter(client, who.name), _tab()
    return matching_ids(client, who, wanted, tab)


@bp.get("/api/notification-state/matching")
@access.users()
def count_matching(who):
    """How many of the caller's notifications match the view (at most MAX_MATCHING);
    with ``rows=1``, how many rows of the inbox they make."""
    client = extensions.redis()
    try:
        rows = _rows()
        if not rows:
            ids, more = _matching(client, who)
            return jsonify(count=len(ids), more=more, most=bulk_by_filter.MAX_MATCHING)
        envelopes, more = matching_envelopes(client, who, _filter(client, who.name), _tab())
    except EnvelopeError as exc:
        return jsonify(error=str(exc), field=exc.field), 400
    return jsonify(count=len({row_key(e) for e in envelopes}), more=more,
                   most=bulk_by_filter.MAX_MATCHING)


@bp.post("/api/notification-state/matching")
@fails_fast_while_redis_is_down
@access.users()
def act_on_matching(who):
    """Mark read, archive, bring back or snooze everything matching the view; every tab
    of the caller is told (``read`` and ``state`` events), as for one by one."""
    body = request.get_json(silent=True)
    action = body.get("action") if isinstance(body, dict) else None
    if action not in bulk_by_filter.ACTIONS or \
            set(body) != ({"action", "until"} if action == "snooze" else {"action"}):
        return jsonify(error='action: the body must be {"action": ...}, one of '
                             + ", ".join(bulk_by_filter.ACTIONS)
                             + ' ({"action": "snooze", "until": ms})', field="action"), 400
    client = extensions.redis()
    try:
        if action == "snooze":  # a bad time is told before the view is read
            archive_and_snooze.parse_until(body["until"], field="until")
        ids, more = _matching(client, who)
        done = bulk_by_filter.apply(client, who.name, action, ids, body.get("until"))
    except (EnvelopeError, archive_and_snooze.StateError) as exc:
        return jsonify(error=str(exc), field=exc.field), 400
    return jsonify(dict(done, more=more))


@bp.post("/api/notification-state/matching/undo")
@fails_fast_while_redis_is_down
@access.users()
def undo_matching(who):
    """Undo the caller's last action on everything matching, exactly, once."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or set(body) != {"undo"} or not isinstance(body["undo"], str):
        return jsonify(error='undo: the body must be {"undo": TOKEN}, the token the action '
                             "answered", field="undo"), 400
    try:
        return jsonify(bulk_by_filter.undo(extensions.redis(), who.name, body["undo"]))
    except bulk_by_filter.UndoGone as exc:
        return jsonify(error=str(exc), field="undo"), 404
