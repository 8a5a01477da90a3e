"""A token bucket: ``rate`` a second, in bursts of up to ``burst``.

Two bounds are one: what one connection may send (HeraldServer cuts off a
client past ``CLIENT_MESSAGE_RATE``: one connection sending 100,000 ``read``
events in a few seconds once exhausted the Redis pool, starved everyone else
and grew the process by 800 MB it kept), and the connects a web process
admits a second (storm.py).
"""
import time


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` saved up; ``take()`` spends one."""

    __slots__ = ("rate", "burst", "tokens", "at")

    def __init__(self, rate, burst, clock=time.monotonic):
        self.rate = rate
        self.burst = burst
        self.tokens = float(burst)
        self.at = clock()

    def take(self, clock=time.monotonic):
        """True when a token was left (and is now spent)."""
        now = clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True
