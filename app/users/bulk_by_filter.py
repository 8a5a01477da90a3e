"""A bulk action on every notification matching a view (GitHub's "select all N
matching"), and its Undo.

The web view (app/web/api/matching.py) finds the ids that match the user's view
on the server, by filter; this module applies one action to them and keeps what
it changed, so that Undo restores exactly that and nothing else:

- ``read``: the ids that were unread become read (undo: unread again);
- ``archive``: the ids not archived yet are archived (undo: back to the inbox);
- ``unarchive``: archived ids go back to the inbox (undo: archived again);
- ``snooze`` until a time: the ids not snoozed until exactly then are snoozed
  (undo: those not snoozed before wake now; those snoozed before until another
  time get that time back, or wake when it has passed meanwhile: Undo puts
  back exactly what the snooze changed, ids and times).

Bounds. An action takes at most MAX_MATCHING notifications (the newest that
match; the answer says when more matched), the number of read marks and unread
exceptions read_state.py keeps per user (MAX_IDS), so that no mark made here is
pushed out by another made here. The undo data is one key per user,
``herald:{u:<user>}:bulk-undo`` (the user's hash tag: app/key_layout.py), the
last action's only (a newer action replaces it), at most MAX_MATCHING ids
and their earlier snooze times (some 250 KB), kept UNDO_SECONDS; Undo takes it
(GETDEL), so it runs once.

    done = bulk_by_filter.apply(client, "ann", "archive", ids)  # {"count", "undo"}
    bulk_by_filter.apply(client, "ann", "snooze", ids, until=ms)  # until: checked
    bulk_by_filter.undo(client, "ann", done["undo"])            # {"action", "count"}
"""
import secrets
import time
from itertools import groupby

import orjson

from app.key_layout import user_tag
from app.users import archive_and_snooze, read_state

MAX_MATCHING = read_state.MAX_IDS  # notifications one action takes, at most (5,000)
UNDO_SECONDS = 3600                # how long an action's Undo is kept
CHUNK = 500                        # ids per write (read_state/archive's bound per call)
ACTIONS = ("read", "archive", "unarchive", "snooze")
INVERSE = {"read": "unread", "archive": "unarchive", "unarchive": "archive", "snooze": "unsnooze"}


class UndoGone(LookupError):
    """No Undo under that token: never made, already used, replaced or expired."""


def undo_key(user):
    return f"herald:{user_tag(user)}:bulk-undo"


def keys_of(user):
    """The key of ``user``'s pending Undo (app.users.purge removes it)."""
    return [undo_key(user)]


def _chunks(ids):
    return [ids[i:i + CHUNK] for i in range(0, len(ids), CHUNK)]


def _write(client, user, action, ids, until=None):
    """Apply ``action`` (one of ACTIONS or their inverses; ``snooze`` until ``until``)
    to ``ids``, CHUNK at a time (each chunk one transaction, announced to the user's
    tabs); returns the ids changed."""
    changed = []
    for chunk in _chunks(ids):
        if action == "snooze":
            changed += list(archive_and_snooze.snooze(client, user, chunk, until)["snoozed"])
        elif action == "unsnooze":
            changed += archive_and_snooze.unsnooze(client, user, chunk)["unsnoozed"]
        elif action in ("read", "unread"):
            change = read_state.apply(client, user, chunk if action == "read" else [], None,
                                      chunk if action == "unread" else [])
            changed += change["ids"] if action == "read" else change["unread"]
        else:
            change = archive_and_snooze.archive(client, user, chunk, archived=action == "archive")
            changed += change.get("archived", change.get("unarchived", []))
    return changed


def _snoozed_until(client, user):
    """``{id: until_ms}`` of ``user``'s snoozes (those due and not yet woken too)."""
    return archive_and_snooze.get(client, user)["snoozed"]


def pending(client, user, action, ids, until=None):
    """Of ``ids`` (matching the view), those ``action`` would change for ``user``."""
    if action == "snooze":
        snoozed = _snoozed_until(client, user)
        return [i for i in ids if snoozed.get(i) != until]
    if action == "read":
        state = read_state.get(client, user)
        return [i for i in ids if not read_state.is_read(state, i)]
    archived, _snoozed = archive_and_snooze.hidden(client, user)
    return [i for i in ids if (i in archived) == (action == "unarchive")]


def apply(client, user, action, ids, until=None):
    """Apply ``action`` to those of ``ids`` it changes (``snooze``: until ``until``, ms,
    checked as archive_and_snooze.parse_until does: StateError naming ``until``); keep
    them for :func:`undo` (one per user: the last). Returns ``{"action", "count",
    "undo"}`` (``undo``: None when nothing changed)."""
    record = {"action": action}
    if action == "snooze":
        until = archive_and_snooze.parse_until(until, field="until")
    changing = pending(client, user, action, ids[:MAX_MATCHING], until)
    if not changing:
        return {"action": action, "count": 0, "undo": None}
    if action == "snooze":  # their earlier times, for Undo to put back
        snoozed = _snoozed_until(client, user)
        record["before"] = {i: snoozed[i] for i in changing if i in snoozed}
    record["ids"] = _write(client, user, action, changing, until)
    record["token"] = token = secrets.token_urlsafe(16)
    client.set(undo_key(user), orjson.dumps(record), ex=UNDO_SECONDS)
    return {"action": action, "count": len(record["ids"]), "undo": token}


def _unsnooze(client, user, ids, before):
    """Undo a snooze of ``ids``: each wakes now, or, snoozed before until a time
    still ahead (``before``), is snoozed until that time again; returns the ids."""
    now = int(time.time() * 1000) + 1000  # a time due within a second: woken now
    back = {i: before[i] for i in ids if before.get(i, 0) > now}
    done = _write(client, user, "unsnooze", [i for i in ids if i not in back])
    by_time = sorted(back.items(), key=lambda item: item[1])
    for until, group in groupby(by_time, key=lambda item: item[1]):
        done += _write(client, user, "snooze", [i for i, _ in group], until)
    return done


def undo(client, user, token):
    """Undo the action that gave ``token``: exactly the ids it changed, once (a snooze:
    their earlier snooze times too). Returns ``{"action": the inverse applied,
    "count"}``; raises UndoGone."""
    raw = client.getdel(undo_key(user))
    record = orjson.loads(raw) if raw else None
    if record is None or not secrets.compare_digest(record["token"], str(token)):
        if record is not None:  # another action's: left as it was
            client.set(undo_key(user), raw, ex=UNDO_SECONDS, nx=True)
        raise UndoGone("undo: nothing to undo under that token (used, replaced by a newer "
                       f"action, or older than {UNDO_SECONDS // 60} minutes)")
    inverse = INVERSE[record["action"]]
    if inverse == "unsnooze":
        return {"action": inverse, "count": len(_unsnooze(client, user, record["ids"],
                                                           record.get("before", {})))}
    return {"action": inverse, "count": len(_write(client, user, inverse, record["ids"]))}
