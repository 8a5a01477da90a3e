"""herald_client: publish to Herald and connect your app's users to it.

    from herald_client import HeraldClient
    herald = HeraldClient("http://127.0.0.1:5000", api_key="hk_...", jwt_secret="...")
    herald.publish("board.card.updated", "Card moved", data={"id": 7, "version": 3})
    token = herald.connection_token("alice", ttl=600, topics=["board"])

For a Flask app, ``herald_client.flask.Herald`` does both from ``app.config``
and renders what a page needs to connect. It needs nothing of Herald's
server code: only requests, urllib3 and PyJWT (and cryptography for RS256
or ES256 tokens).
"""
from .errors import HeraldError, InvalidNotification, NotAuthorized, RateLimited, Unavailable
from .publisher import HeraldClient, retry_policy
from .tokens import TokenSigner

__all__ = ["HeraldClient", "TokenSigner", "retry_policy", "HeraldError", "InvalidNotification",
           "NotAuthorized", "RateLimited", "Unavailable"]
__version__ = "1.0.0"
