"""The example's background job: tell a user, and only them, when a card is assigned to them.

Views put ``(card, who assigned it)`` on ``queue`` after their commit; a
worker thread publishes a private notification (``user`` set, kind alert)
to the assignee, which Herald delivers to that user's pages alone. A
publish that cannot be confirmed is retried inside the client with the same
idempotency key; one that still fails is logged and dropped, never crashing
the worker.

Unlike the card itself (a data event, through the outbox: live.py), this is
a plain publish after the commit, a dual write on purpose: it is a nudge for
a person, not the record. If the process dies between the commit and the
publish, or Herald stays away, the alert is lost, and that is acceptable:
the assignment is on the board (its data event is never lost) and the
assignee sees it there. Putting it before the commit would be worse: an
alert for an assignment that then rolled back.
"""
import logging
import threading
from queue import Queue

from herald_client import HeraldError

from .models import COLUMN_NAMES

log = logging.getLogger("board.alerts")


class AssignmentAlerts:
    def __init__(self, herald_client):
        self.client = herald_client
        self.queue = Queue()
        self.thread = threading.Thread(target=self.run, name="assignment-alerts", daemon=True)

    def start(self):
        self.thread.start()

    def run(self):
        while True:
            card, by = self.queue.get()
            try:
                self.client.publish(
                    "board.alert", f"{by} assigned you “{card['title']}”", user=card["assignee"],
                    severity="warning", body=f"It is in {COLUMN_NAMES[card['column']]}.",
                    data={"card": card["id"]})
            except HeraldError as exc:
                log.warning("could not alert %s: %s", card["assignee"], exc)
