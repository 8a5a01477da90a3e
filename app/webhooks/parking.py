"""Bounds on what an endpoint keeps in Redis, so that a long outage cannot grow it without end.

- ``WEBHOOK_QUEUE_MAX`` (default 10,000) deliveries wait in an endpoint's
  queue at most. A notification that finds the queue full is not queued:
  it is **parked** at once, with the error ``not queued: the queue was full
  (WEBHOOK_QUEUE_MAX)``, and counted (``overflowed`` in the endpoint's
  state, ``herald_webhook_overflowed_total``); *Retry parked* sends it.
- ``WEBHOOK_PARKED_MAX`` (default 10,000) parked deliveries are kept at most:
  parking one more **drops the oldest** parked one, counted (``dropped``,
  ``herald_webhook_dropped_total``); those are gone for good.

``PARK_LUA`` is the Lua function both the dispatcher (a full queue) and the
senders (a delivery given up on) park with.
"""

QUEUE_MAX = 10_000
PARKED_MAX = 10_000

# park(parked list, stats, worker figures, record, most): appends the record, drops the
# oldest beyond ``most`` and counts both (stats 'dropped', figures 'webhook_parked' and
# 'webhook_dropped').
PARK_LUA = """
local function park(parked, stats, figures, record, most)
  redis.call('RPUSH', parked, record)
  redis.call('HINCRBY', figures, 'webhook_parked', 1)
  local over = redis.call('LLEN', parked) - tonumber(most)
  if over > 0 then
    redis.call('LTRIM', parked, over, -1)
    redis.call('HINCRBY', stats, 'dropped', over)
    redis.call('HINCRBY', figures, 'webhook_dropped', over)
  end
end
"""
