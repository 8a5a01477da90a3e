"""The ZeroMQ bridge's parts; ``python -m workers.zmq_bridge`` runs them.

- ``frames``: what a peer sent, checked by the very rules ``publish()`` uses;
- ``ingest``: PULL (fire-and-forget) and ROUTER (confirmed) into Redis, in
  pipelined batches, through a bounded backlog that rides out a Redis outage;
- ``egress``: every notification, from any publisher, out on XPUB;
- ``security``: loopback by default, CURVE keys to bind anywhere else;
- ``settings``: all of it configured from the environment.
"""
