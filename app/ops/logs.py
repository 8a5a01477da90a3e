"""Structured logs: one JSON object per line, carrying ``correlation_id``.

Every process (web and workers) calls :func:`configure`. A line has ``ts``,
``level``, ``logger``, ``message``, ``process`` and, when known,
``correlation_id``: the one set for the current request or greenlet (see
:func:`bind`), or one passed per call as ``extra={"correlation_id": ...}``.
A web request takes its id from the ``X-Correlation-ID`` header (or gets a
new one) and answers with it; a published notification's own
``correlation_id`` (a Spark run's, say) is what its log lines carry.
The format: ``LOG_FORMAT=json`` or ``LOG_FORMAT=text`` (a plain line for reading
by eye); unset, text when stderr is a terminal (``make run`` in a shell) and
JSON otherwise (a file, a pipe, a service manager's journal).
"""
import contextvars
import logging
import re
import sys
import time
import uuid

import orjson

from app.settings import get

current = contextvars.ContextVar("correlation_id", default=None)
HEADER = "X-Correlation-ID"
GOOD_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}\Z")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    def format(self, record):
        entry = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                  + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.process,
        }
        correlation_id = getattr(record, "correlation_id", None) or current.get()
        if correlation_id:
            entry["correlation_id"] = correlation_id
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


class StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time, not the one it was made with
    (a test runner swaps it, and a library logging from ``__del__`` at exit
    must not meet a closed stream)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value):
        pass


FORMATS = ("json", "text")


def choose_format(stream=None):
    """``LOG_FORMAT`` when set (``json`` or ``text``); unset, ``text`` when ``stream``
    (default: stderr) is a terminal, ``json`` when it is not."""
    chosen = get("LOG_FORMAT")
    if chosen:
        return chosen
    stream = sys.stderr if stream is None else stream
    try:
        return "text" if stream.isatty() else "json"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return "json"


def configure(level=logging.INFO, stream=None):
    """Log to ``stream`` (default: whatever ``sys.stderr`` is at the time) in the
    format :func:`choose_format` picks for it."""
    handler = StderrHandler() if stream is None else logging.StreamHandler(stream)
    if choose_format(stream) == "text":
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    else:
        handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("geventwebsocket.handler").setLevel(logging.WARNING)


def bind(correlation_id):
    """Make ``correlation_id`` the current one (for this greenlet or thread)."""
    current.set(correlation_id)


def init_app(app):
    """Give every request a correlation id: the client's, when it is a sane one, else new."""
    from flask import request

    @app.before_request
    def take_correlation_id():
        given = request.headers.get(HEADER, "")
        bind(given if GOOD_ID.match(given) else uuid.uuid4().hex)

    @app.after_request
    def give_correlation_id(response):
        response.headers.setdefault(HEADER, current.get() or "")
        return response
