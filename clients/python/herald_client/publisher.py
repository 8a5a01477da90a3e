"""Publishing to Herald over HTTP, exactly once, with retries.

    from herald_client import HeraldClient
    herald = HeraldClient("http://127.0.0.1:5000", api_key="hk_...")
    herald.publish("board.card.updated", "Card moved", data={"id": 7, "version": 3})

Every publish carries an ``Idempotency-Key`` (a fresh random one unless you
give yours), so retrying it is safe: when Herald or its Redis went away
after storing a notification and before answering, the retry is answered
with the first publish's id and nothing is stored twice. Retries are
urllib3's ``Retry`` (connection errors, timeouts, 429/502/503/504, honouring
``Retry-After``), with exponential backoff and jitter.
"""
import random
import time
import uuid

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry
from urllib3.util.timeout import Timeout

from .errors import HeraldError, InvalidNotification, NotAuthorized, RateLimited, Unavailable
from .tokens import TokenSigner

RETRY_STATUSES = (429, 502, 503, 504)


def retry_policy(retries=8, backoff=0.2, backoff_max=5.0):
    """urllib3's Retry for publishing: safe for POST because of the idempotency key.

    ``retries`` attempts after the first, waiting ``backoff`` * 2^n seconds
    (at most ``backoff_max``, with up to 0.1 s of jitter) or what
    ``Retry-After`` says.
    """
    return Retry(total=retries, connect=retries, read=retries, status=retries, other=0,
                 backoff_factor=backoff, backoff_max=backoff_max, backoff_jitter=0.1,
                 status_forcelist=RETRY_STATUSES, allowed_methods=frozenset({"GET", "POST"}),
                 respect_retry_after_header=True, raise_on_status=False)


class HeraldClient:
    """Herald's publishing API, and connection tokens for your users.

    ``url``: where Herald is (e.g. ``http://127.0.0.1:5000``); ``api_key``:
    one from ``flask --app wsgi apikeys create NAME``; ``jwt_secret`` (HS256)
    or ``jwt_private_key`` (a PEM, RS256 or ES256): the key Herald checks
    connection tokens with (its ``JWT_SECRET`` / ``JWT_PUBLIC_KEY``), needed
    only for :meth:`connection_token`. ``timeout``: seconds per attempt.
    ``deadline``: when given, the most seconds a call takes in all, retries and
    their waits included (then ``retry`` is not used: the call is tried again,
    after a short growing wait, on the same failures, until the deadline).
    """

    def __init__(self, url, api_key=None, *, jwt_secret=None, jwt_private_key=None,
                 jwt_algorithm=None, audience=None, issuer=None, timeout=5.0, retry=None,
                 deadline=None):
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.deadline = deadline
        self.session = requests.Session()
        if deadline is not None:
            retry = Retry(total=0, connect=0, read=0, status=0, other=0, redirect=0,
                          raise_on_status=False)
        adapter = HTTPAdapter(max_retries=retry if retry is not None else retry_policy())
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        if api_key:
            self.session.headers["Authorization"] = f"Bearer {api_key}"
        self.signer = None
        if jwt_secret or jwt_private_key:
            self.signer = TokenSigner(jwt_secret or jwt_private_key, jwt_algorithm,
                                      audience=audience, issuer=issuer)

    def variant(self, *, retries=None, timeout=None):
        """A client for the same Herald with the same keys, but ``retries`` retries (see
        :func:`retry_policy`) and ``timeout`` seconds per attempt."""
        other = HeraldClient(self.url, timeout=timeout if timeout is not None else self.timeout,
                             retry=retry_policy(retries=retries) if retries is not None else None,
                             deadline=self.deadline if retries is None else None)
        other.session.headers.update(self.session.headers)
        other.signer = self.signer
        return other

    # -- publishing ------------------------------------------------------------------

    def publish(self, topic, title, *, idempotency_key=None, **fields):
        """Publish one notification; returns ``{"id", "ts"}``.

        ``fields``: body, severity, data, user (private to that user),
        origin, correlation_id, url. Raises InvalidNotification, NotAuthorized,
        RateLimited or Unavailable (see errors.py).
        """
        envelope = dict(fields, topic=topic, title=title)
        return self._post("/api/notifications", envelope, idempotency_key)

    def publish_many(self, notifications, *, idempotency_key=None):
        """Publish a list of notifications (dicts with topic, title, …), all or none,
        in order; returns ``[{"id", "ts"}, ...]``. At most 100 per call."""
        reply = self._post("/api/notifications/batch", {"notifications": list(notifications)},
                           idempotency_key)
        return reply["notifications"]

    def _post(self, path, body, idempotency_key):
        headers = {"Idempotency-Key": idempotency_key or uuid.uuid4().hex}
        if self.deadline is not None:
            return self._post_by(time.monotonic() + self.deadline, path, body, headers)
        try:
            response = self.session.post(self.url + path, json=body, headers=headers,
                                         timeout=self.timeout)
        except requests.RequestException as exc:
            raise self._unconfirmed(exc, headers) from exc
        return _answer(response, headers["Idempotency-Key"])

    def _post_by(self, deadline, path, body, headers):
        """Post until ``deadline`` (monotonic): each attempt gets what time is left (urllib3's
        total timeout, connect and read together), and retryable failures are tried again
        after 0.05, 0.1, 0.2 ... s (or Retry-After), never past the deadline."""
        wait = 0.05
        while True:
            left = deadline - time.monotonic()
            try:
                response = self.session.post(self.url + path, json=body, headers=headers,
                                             timeout=Timeout(total=max(left, 0.001)))
            except requests.RequestException as exc:
                failure, hint = exc, None
            else:
                if response.status_code not in RETRY_STATUSES:
                    return _answer(response, headers["Idempotency-Key"])
                failure, hint = response, _seconds(response.headers.get("Retry-After"))
            pause = hint if hint is not None else random.uniform(wait / 2, wait)
            if time.monotonic() + pause >= deadline:
                if isinstance(failure, requests.Response):
                    return _answer(failure, headers["Idempotency-Key"])
                raise self._unconfirmed(failure, headers) from failure
            time.sleep(pause)
            wait = min(wait * 2, 1.0)

    def _unconfirmed(self, exc, headers):
        reason = f"Herald at {self.url} did not confirm the publish: {exc}"
        return Unavailable(f"{reason}. Publish again with "
                           f"idempotency_key={headers['Idempotency-Key']!r} to store it exactly "
                           "once", reason=reason)

    # -- connection tokens --------------------------------------------------------------

    def connection_token(self, user, ttl=600, topics=None):
        """A token for ``user`` to connect to Herald with (Socket.IO, REST, SSE),
        valid ``ttl`` seconds, limited to the topic prefixes ``topics`` if given."""
        if self.signer is None:
            raise HeraldError("connection_token needs jwt_secret or jwt_private_key")
        return self.signer.token(user, ttl=ttl, topics=topics)

    def close(self):
        self.session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _answer(response, key):
    """The JSON of a successful answer, or the matching exception."""
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.ok:
        return body
    message = body.get("error") or f"HTTP {response.status_code}"
    status = response.status_code
    if status in (400, 413, 422):
        raise InvalidNotification(message, status, body.get("field"))
    if status in (401, 403):
        raise NotAuthorized(message, status)
    if status == 429:
        raise RateLimited(message, status, _seconds(response.headers.get("Retry-After")))
    raise Unavailable(f"{message} (publish again with idempotency_key={key!r} to store it "
                      "exactly once)", status, reason=message)


def _seconds(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
