"""The API-key rate limit of the publish endpoints, counted by the publish script.

Every API request made with an API key is limited per key (RATELIMIT_API_KEY,
app/web/rate_limits.py). Counted by Flask-Limiter before the view, that was a
Redis round trip of its own in front of every REST publish, and a fifth of the
request's time in Python: the largest cost of publish-to-browser latency after
the publish itself (bench/RESULTS.md). The two publish endpoints are therefore
exempt from Flask-Limiter for API keys, and count the same limits themselves:
the publish script raises each limit's counter in its atomic step and writes
nothing past one (app/stream/publish_scripts.py), so a publish made with a
remembered key is one round trip in all. A publish refused before the script
(a body that is not JSON, a bad envelope) is counted by :func:`spend`, so a
caller past its limit gets 429 whatever it sends, as before.

The limits are read with the limits library (the one Flask-Limiter uses), as
fixed windows, each endpoint counted apart, as Flask-Limiter counts them.
"""
import functools

from flask import current_app, request
from limits import parse_many

from app.stream.keys import QUOTA
from app.stream.publish import Quota
from app.web.rate_limits import api_key_identity

PREFIX = QUOTA + "publish:"  # in the stream's slot: the publish script counts them


@functools.lru_cache(maxsize=8)
def limits(spec):
    """RATELIMIT_API_KEY's limits, in the order Flask-Limiter checks them."""
    return tuple(sorted(parse_many(spec)))


def quota(who):
    """The :class:`Quota` this publish counts against, or None when its caller is not
    an API key (admins publishing by session or token are not limited)."""
    if who.kind != "apikey":
        return None
    return quota_of(current_app.config["RATELIMIT_API_KEY"], request.endpoint, api_key_identity())


@functools.lru_cache(maxsize=1024)
def quota_of(spec, endpoint, identity):
    """The :class:`Quota` of RATELIMIT_API_KEY ``spec`` for view ``endpoint`` and the
    API key whose limits' key is ``identity`` (rate_limits.api_key_identity); the same
    (immutable) one each time for the keys publishing lately."""
    items = limits(spec)
    base = f"{PREFIX}{endpoint}:{identity}:"
    return Quota(tuple(f"{base}{item.amount}/{item.multiples}/{item.GRANULARITY.name}"
                       for item in items),
                 tuple(item.amount for item in items),
                 tuple(item.get_expiry() for item in items))


def exceeded(index):
    """The limit at ``index`` of the current request's quota (a limits RateLimitItem)."""
    return limits(current_app.config["RATELIMIT_API_KEY"])[index]
