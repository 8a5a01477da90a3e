"""The board's private alert: tell a user, and only them, when a card is assigned to them.

``herald.publish`` in the view's own transaction writes the alert to the
outbox beside the card's change: the commit publishes both, exactly once; a
rollback neither; Herald away or this process killed after the commit, the
alert waits in the table and still arrives (it used to be a publish after
the commit from a worker thread: a dual write that lost the alert then).
Herald delivers it (``user`` set, kind alert) to the assignee's pages alone.
"""
from .models import COLUMN_NAMES


def assignment_alert(herald, card, by):
    """Queue the alert for ``card``'s new assignee (a dict: Card.to_json), assigned ``by``."""
    herald.publish("board.alert", f"{by} assigned you “{card['title']}”", user=card["assignee"],
                   severity="warning", body=f"It is in {COLUMN_NAMES[card['column']]}.",
                   data={"card": card["id"]})
