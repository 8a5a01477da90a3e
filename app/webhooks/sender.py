"""One endpoint's sender: its queue, in order, one delivery at a time.

The head of the queue is POSTed until it is delivered or parked; only then
does the next one go (per-endpoint order). Each endpoint has its own sender
thread, so a slow or dead endpoint holds up no other.

- 2xx: delivered; the head is removed.
- 5xx, 408, 429, a timeout, a network or TLS error, or a host that now
  resolves to a refused address: retried after a delay drawn at random
  between 0 and ``min(backoff_max, backoff_base * 2**(attempts-1))`` (exponential
  backoff, full jitter), until ``retry_for`` seconds after the notification
  was published; then parked.
- 4xx (and 3xx: redirects are not followed): retried ``client_error_retries``
  times, then parked.
- One whose retry period ended while it waited behind one that was parked
  for that reason, with no success since: parked without being tried (so a
  day-long outage drains at once rather than at one timeout per notification).

The retry state (attempts, next attempt time, last error) is in Redis: a
worker that stops or crashes resumes where it was. The head is removed only
after the receiver answered 2xx, so a crash mid-delivery sends it again with
the same ``Herald-Delivery`` id (at least once; receivers drop duplicates).
Each outcome is written by one script, with the endpoint's stats and the webhook
figures: all of them in the webhooks' hash slot (layout.py), on a cluster too.
"""
import logging
import random
import threading
import time

import orjson

from app.redis_client import UNAVAILABLE
from app.stream.envelope import id_key
from app.webhooks import layout, parking, post, rotation, sealing, signing, store

log = logging.getLogger("herald.webhooks")

IDLE = 1.0  # seconds between looks at an empty queue (a queued delivery wakes it at once)
MAX_EXPONENT = 32  # 2**32 times any base is past any sane backoff_max; never an overflow
TROUBLE_MAX = 60.0  # seconds: the longest wait after an unexpected error, doubling up to it

# KEYS: endpoint, queue, attempt, stats, worker figures. ARGV: item, now.
_DONE_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('LREM', KEYS[2], 1, ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('HINCRBY', KEYS[4], 'delivered', 1)
redis.call('HSET', KEYS[4], 'last_success_at', ARGV[2])
redis.call('HDEL', KEYS[4], 'expired')
redis.call('HINCRBY', KEYS[5], 'webhook_delivered', 1)
return 1
"""

# KEYS: endpoint, attempt, stats, worker figures. ARGV: item, attempts, next_at, error, now.
_RETRY_LUA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'item', ARGV[1], 'attempts', ARGV[2], 'next_at', ARGV[3])
redis.call('HINCRBY', KEYS[3], 'failures', 1)
redis.call('HSET', KEYS[3], 'last_error', ARGV[4], 'last_error_at', ARGV[5])
redis.call('HINCRBY', KEYS[4], 'webhook_failures', 1)
return 1
"""

# KEYS: endpoint, queue, attempt, parked, stats, worker figures. ARGV: item, parked
# record, error for the stats ("": left as it is), now, "1" when it was an attempt
# (a failure to count), "1" when parked because its retry period ended, parked max.
_PARK_LUA = parking.PARK_LUA + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('LREM', KEYS[2], 1, ARGV[1])
redis.call('DEL', KEYS[3])
if ARGV[5] == '1' then
  redis.call('HINCRBY', KEYS[5], 'failures', 1)
  redis.call('HINCRBY', KEYS[6], 'webhook_failures', 1)
end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[5], 'last_error', ARGV[3], 'last_error_at', ARGV[4])
end
if ARGV[6] == '1' then redis.call('HSET', KEYS[5], 'expired', 1) end
park(KEYS[4], KEYS[5], KEYS[6], ARGV[2], ARGV[7])
return 1
"""

def backoff(settings, attempts):
    """Seconds to wait after failed attempt number ``attempts``: drawn between 0 and
    ``min(backoff_max, backoff_base * 2**(attempts-1))``, the exponent capped so that no
    attempt count (it only grows, and survives restarts) overflows a float."""
    exponent = min(max(attempts - 1, 0), MAX_EXPONENT)
    return random.uniform(0, min(settings.backoff_max, settings.backoff_base * 2.0 ** exponent))


class Sender(threading.Thread):
    """Delivers endpoint ``endpoint_id``'s queue until :meth:`stop` (or the endpoint is deleted)."""

    def __init__(self, client, endpoint_id, settings, clock=time.time, active=None):
        super().__init__(name=f"webhook-{endpoint_id}", daemon=True)
        self.client, self.endpoint_id, self.settings, self.clock = client, endpoint_id, settings, clock
        self.active = active or (lambda: True)  # False: another worker may be sending now
        self.woken = threading.Event()
        self.stopping = False
        self.done = client.register_script(_DONE_LUA)
        self.retry = client.register_script(_RETRY_LUA)
        self.park = client.register_script(_PARK_LUA)
        self.poster = post.Poster(settings.connect_timeout, settings.timeout)

    def wake(self):
        self.woken.set()

    def stop(self):
        self.stopping = True
        self.woken.set()

    def run(self):
        outage, trouble = 0.1, IDLE
        while not self.stopping:
            try:
                wait = self.step()
                outage, trouble = 0.1, IDLE
            except UNAVAILABLE as exc:
                log.warning("webhook %s: Redis unreachable (%s)", self.endpoint_id, exc)
                wait, outage = outage, min(outage * 2, 2.0)
            except Exception:
                # A bug, not an outage: waits that double (up to a minute), so that a
                # step failing after its POST does not send the head every second.
                log.exception("webhook %s: unexpected error; trying again in %.0f s",
                              self.endpoint_id, trouble)
                wait, trouble = trouble, min(trouble * 2, TROUBLE_MAX)
            if wait is None:
                break  # the endpoint was deleted
            if wait:
                self.woken.wait(wait)
        self.poster.close()

    def step(self):
        """Try the head once if it is due. Returns seconds to wait before the next
        step (0: go on at once), or None when the endpoint is gone."""
        self.woken.clear()
        if not self.active():
            return IDLE  # our worker's lease may have lapsed (a pause): send nothing
        with self.client.pipeline(transaction=False) as pipe:
            pipe.hgetall(store.key(self.endpoint_id))
            pipe.lindex(store.queue_key(self.endpoint_id), 0)
            pipe.hgetall(store.attempt_key(self.endpoint_id))
            pipe.hget(store.stats_key(self.endpoint_id), "expired")
            raw, item, attempt, expired = pipe.execute()
        if not raw:
            return None
        record = store.decode(self.endpoint_id, raw)
        if item is None:
            return IDLE
        attempts, next_at = 0, 0.0
        if attempt.get(b"item") == item:
            attempts, next_at = int(attempt[b"attempts"]), float(attempt[b"next_at"])
        now = self.clock()
        if next_at > now:
            return min(next_at - now, IDLE)
        notification_id, body = item.split(b" ", 1)
        delivery = store.delivery_id(self.endpoint_id, notification_id)
        deadline = id_key(notification_id)[0] / 1000 + self.settings.retry_for
        if not attempts and now > deadline and expired:
            # It waited out its whole retry period behind one that was parked for good
            # reason, with no success since: parked without trying, or a long outage would
            # take one attempt (a timeout, perhaps) per notification to drain.
            self._park(item, notification_id, body, delivery, 0, post.Outcome(
                False, None, "not tried: its retry period ended while the endpoint failed", True),
                now, attempted=False)
            return 0
        if record["secret"] is None:  # sealed under another SECRET_KEY (sealing.py)
            log.error("webhook %s: not delivering: %s", self.endpoint_id, record["secret_error"])
            return sealing.UNREADABLE_WAIT
        outcome = self.poster.deliver(record["url"], body, {
            "Herald-Delivery": delivery,
            "Herald-Signature": signing.sign(rotation.signing_secrets(record, now), body, delivery)})
        now = self.clock()
        if outcome.ok:
            self.done(keys=self._keys("queue", "attempt", "stats"), args=[item, now])
            return 0
        attempts += 1
        settings = self.settings
        delay = backoff(settings, attempts)
        give_up = now + delay > deadline or (
            not outcome.transient and attempts > settings.client_error_retries)
        if give_up:
            self._park(item, notification_id, body, delivery, attempts, outcome, now,
                       expired=now + delay > deadline)
        else:
            self.retry(keys=self._keys("attempt", "stats"),
                       args=[item, attempts, now + delay, outcome.error, now])
        return 0

    def _park(self, item, notification_id, body, delivery, attempts, outcome, now,
              attempted=True, expired=False):
        log.warning("webhook %s: parked %s after %d attempts: %s", self.endpoint_id,
                    delivery, attempts, outcome.error)
        parked = orjson.dumps({"delivery": delivery, "notification": notification_id.decode(),
                               "attempts": attempts, "error": outcome.error,
                               "status": outcome.status, "parked_at": now, "body": body.decode()})
        self.park(keys=self._keys("queue", "attempt", "parked", "stats"),
                  args=[item, parked, outcome.error if attempted else "", now,
                        int(attempted), int(expired), self.settings.parked_max])

    def _keys(self, *names):
        keys = {"queue": store.queue_key, "attempt": store.attempt_key,
                "parked": store.parked_key, "stats": store.stats_key}
        return [store.key(self.endpoint_id), *[keys[n](self.endpoint_id) for n in names],
                layout.FIGURES]
