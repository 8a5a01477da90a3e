"""The digest worker's parts; ``python -m workers.digest`` runs them.

- ``collect``: notifications from ``herald:stream`` (a consumer group) into
  each matching subscription's window, or its critical outbox;
- ``send``: due windows and the outbox, rendered and sent over SMTP, once;
- ``smtp``: ``SMTP_URL`` and the sending itself.
"""
