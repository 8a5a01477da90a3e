"""What can go wrong talking to Herald, as exceptions a caller can act on.

    try:
        herald.publish("board.card.updated", "Card moved")
    except InvalidNotification as exc:   # fix the call: exc.field names what is wrong
        ...
    except Unavailable:                  # not confirmed after every retry: try later,
        ...                              # with the same idempotency_key
"""


class HeraldError(Exception):
    """Base class. ``status`` is the HTTP status when Herald answered, else None."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class InvalidNotification(HeraldError):
    """Herald refused the notification (400, 413, 422): ``field`` names what is wrong.

    Retrying the same call cannot succeed; change it.
    """

    def __init__(self, message, status=None, field=None):
        super().__init__(message, status)
        self.field = field


class NotAuthorized(HeraldError):
    """The API key is missing, wrong or revoked (401), or may not do this (403)."""


class RateLimited(HeraldError):
    """Still over the rate limit (429) after every retry; ``retry_after`` in seconds."""

    def __init__(self, message, status=429, retry_after=None):
        super().__init__(message, status)
        self.retry_after = retry_after


class Unavailable(HeraldError):
    """Herald could not be reached, or could not confirm the publish, after every retry.

    The notification may or may not be stored: publish it again with the
    same ``idempotency_key`` and it is stored exactly once (the message says
    so); ``reason`` is what went wrong, without that advice.
    """

    def __init__(self, message, status=None, reason=None):
        super().__init__(message, status)
        self.reason = reason or message
