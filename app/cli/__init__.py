"""Herald's Flask commands (``flask --app wsgi <group> ...``).

- ``common``: Herald's Redis for a command, and one-line errors (never a traceback);
- ``users``: ``users`` and ``apikeys``; ``notify``: ``notify``;
- ``commands``: registers every group, those of app/digests/cli.py,
  app/webhooks/cli.py and app/spark/cli.py included.
"""
