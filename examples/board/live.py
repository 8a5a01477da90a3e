"""Herald: the board's cards, live in every open page, through the transactional outbox.

``herald.track(Card, ...)`` makes every commit that adds, changes or deletes
a card write a row to ``herald_outbox`` in that same commit; the relay (a
thread of the web process, or ``flask herald relay``) publishes each row
afterwards as ``board.card.created|updated|deleted`` (``kind: "data"``),
exactly once and in commit order. So there is no publish in the views: a
change is never committed without its event, nor announced without being
committed (the old publish-after-write could do either), and events wait
in the table while Herald is away.

``data`` is the card as pages see it (``version`` and ``updated_by`` let
board.js drop stale events and say who changed a field being edited);
``title`` is the sentence the activity list shows.
"""
from herald_client.flask import Herald

from .models import COLUMN_NAMES, Card

herald = Herald()


def card_title(card, action, changes):
    """What happened, in words: "bob moved “Write docs” from To do to Doing"."""
    who = card.updated_by or "someone"
    if action == "created":
        return f"{who} added “{card.title}” to {_column(card.column)}"
    if action == "deleted":
        return f"{who} deleted “{card.title}”"
    parts, name = [], f"“{card.title}”"
    if "title" in changes:
        old, new = changes["title"]
        parts.append(f"renamed “{old}” to “{new}”")
        name = "it"
    if "column" in changes:
        old, new = changes["column"]
        parts.append(f"moved {name} from {_column(old)} to {_column(new)}")
        name = "it"
    if "assignee" in changes:
        old, new = changes["assignee"]
        parts.append(f"assigned {name} to {new}" if new else f"took {old} off {name}")
    return f"{who} {' and '.join(parts) or f'changed “{card.title}”'}"


def _column(key):
    return COLUMN_NAMES.get(key, key)


herald.track(Card, prefix="board.card", data=Card.to_json, title=card_title)
