"""Email digests: everything about them, in one package.

- ``store``: digest subscriptions (who, which topics, when);
- ``schedule``: when they are due (hourly, daily@HH:MM, cron; time zones, DST);
- ``windows``: what has been collected for each, until it is sent;
- ``collect``: notifications from ``herald:stream`` (a consumer group; every
  shard's stream with ``STREAM_SHARDS=N``) into
  each matching subscription's window, or its critical outbox, once each;
- ``consumers``: the group's consumers (one per worker process; what a dead
  one left pending is taken over; stale names deleted);
- ``send``: due windows and the outbox, rendered (``render``) and sent over
  SMTP (``smtp``: ``SMTP_URL`` and the sending itself), exactly once;
- ``worker``: the loop of both; ``python -m workers.digest`` runs it, as
  many times over as you like.
"""
