"""A job's life as notifications: started, progress, succeeded or failed, one run.

    with herald.job("export", user=user.id, title="Export of your posts") as job:
        for done, total in export():
            job.progress(100 * done / total)
        job.result(url="/exports/7.csv", rows=total)

publishes ``job.export.started``, ``job.export.progress`` (``data.percent``)
and ``job.export.succeeded`` (or ``job.export.failed`` with the exception's
type and message, which is raised on), all under one ``correlation_id``: the
inbox shows the run as one row with its progress bar, and a page can follow
it with ``herald:job.export.progress`` events. Progress is sent at most once
every ``every`` seconds: a call sooner than that after the last one sent is
skipped (no thread waits to send it later; the next call sent carries the
newest value, and the end always goes out, at 100 when it succeeded).
"""
import re
import time
import uuid

from .envelope import is_number

NAME_RE = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\Z")


class Job:
    """One run of a job; ``publish(topic, title, **fields)`` sends each step."""

    def __init__(self, publish, name, *, user=None, title=None, url=None, correlation_id=None,
                 every=0.5, data=None):
        if not isinstance(name, str) or not NAME_RE.match(name) or len(name) > 150:
            raise ValueError(f"job name: {name!r} must be dot-separated segments of "
                             "[a-z0-9_-], e.g. export or reports.monthly")
        self._publish = publish
        self.name, self.user, self.url = name, user, url
        self.title = title or name.replace(".", " ").replace("_", " ").capitalize()
        self.correlation_id = correlation_id or f"job-{uuid.uuid4().hex}"
        self.every = every
        self.data = dict(data or {})
        self.percent = None
        self._sent_at = None
        self._result = {}
        self.started_at = None

    def _send(self, stage, title, severity="info", body=None, **data):
        fields = {"severity": severity, "correlation_id": self.correlation_id,
                  "data": dict(self.data, job=self.name, **data)}
        for key, value in (("user", self.user), ("url", self.url), ("body", body)):
            if value is not None:
                fields[key] = value
        self._publish(f"job.{self.name}.{stage}", title, **fields)

    def start(self):
        self.started_at = time.monotonic()
        self._send("started", f"{self.title} started")
        return self

    def progress(self, percent, message=None):
        """Say how far the run is (0-100); sent now unless one went less than ``every``
        seconds ago."""
        if not is_number(percent):
            raise ValueError(f"progress: {percent!r} must be a number from 0 to 100")
        self.percent = max(0.0, min(100.0, float(percent)))
        now = time.monotonic()
        if self._sent_at is not None and now - self._sent_at < self.every:
            return False
        self._sent_at = now
        self._send("progress", message or f"{self.title}: {round(self.percent)}%",
                   percent=round(self.percent, 1))
        return True

    def result(self, **data):
        """Data the ``succeeded`` notification carries (a link, counts...)."""
        self._result.update(data)

    def _elapsed(self):
        return round(time.monotonic() - self.started_at, 3) if self.started_at else None

    def __enter__(self):
        return self.start()

    def __exit__(self, kind, error, _traceback):
        if error is None:
            self._send("succeeded", f"{self.title} done", "success", percent=100,
                       duration_s=self._elapsed(), **self._result)
        else:
            message = str(error)[:1000] or kind.__name__
            self._send("failed", f"{self.title} failed", "error", body=message,
                       error_type=kind.__name__, error_message=message,
                       duration_s=self._elapsed())
        return False  # the exception goes on
