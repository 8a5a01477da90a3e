"""The notification itself, with no Flask: its Redis keys (``keys``), the
envelope's rules (``envelope``), publishing (``publish``), following
``herald:live`` (``follow``), reading history (``history``), the inbox's
filters (``filters``) and the ``herald:control`` messages (``control``).

Workers, the ZeroMQ bridge and Spark drivers import these without loading Flask.
"""
