"""Webhooks: notifications POSTed, signed, to the HTTP endpoints admins register.

- ``store``: the endpoints (URL, topic prefixes, min severity, secret,
  ``private``) and what each has queued, parked and delivered;
- ``outbound``: where a webhook may point (http/https only, no loopback,
  private or reserved address unless ``WEBHOOK_ALLOW`` says so), checked at
  registration and again, on the resolved address, at every delivery;
- ``signing``: the ``Herald-Signature`` header (over the time, the delivery id
  and the body), and how a receiver checks it;
- ``rotation``: a new signing secret, the old one signing too for a while;
- ``parking``: the bounds on an endpoint's queue and parked list;
- ``post``: one POST to the checked address (timeouts, no redirects);
- ``dispatch``: ``herald:stream`` (a consumer group; every shard's stream with
  ``STREAM_SHARDS=N``) into each matching
  endpoint's queue, each entry queued once (recorded, fenced by the lease)
  and acknowledged just after;
- ``sender``: one per endpoint: its queue in order, retries with backoff,
  parking;
- ``worker``: the dispatcher and the senders in one process
  (``python -m workers.webhooks``);
- ``settings``: the worker's ``WEBHOOK_*`` settings;
- ``figures``: the webhook metrics in ``/metrics``;
- ``layout``: the keys, all under the hash tag ``{webhooks}`` (one slot of a
  Redis Cluster), and the one-time move from their old names.

See docs/webhooks.md.
"""
