"""SMTP from ``SMTP_URL``: ``smtp://user:pass@host:port`` (``?starttls=1`` to
upgrade the connection) or ``smtps://user:pass@host:port`` (TLS from the start).
The sender address is ``DIGEST_FROM`` (default ``Herald <herald@localhost>``).
"""
import smtplib
import ssl
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

from app.settings import get

ERRORS = (smtplib.SMTPException, OSError)


class SmtpUrlError(ValueError):
    """SMTP_URL cannot be used; the message says why."""


@dataclass
class Smtp:
    host: str
    port: int
    tls: bool = False
    starttls: bool = False
    user: str = ""
    password: str = ""
    sender: str = "Herald <herald@localhost>"
    timeout: float = 10.0

    @classmethod
    def from_url(cls, url, sender=None):
        parts = urlsplit(url)
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()  # no password
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise SmtpUrlError(f"SMTP_URL: must be smtp://[user:pass@]host[:port] or smtps://…, "
                               f"not {shown!r}")
        try:
            port = parts.port
        except ValueError:
            raise SmtpUrlError(f"SMTP_URL: the port of {shown!r} must be a number from 1 to "
                               "65535") from None
        query = parse_qs(parts.query)
        tls = parts.scheme == "smtps"
        return cls(host=parts.hostname, port=port or (465 if tls else 25), tls=tls,
                   starttls=query.get("starttls", ["0"])[0] in ("1", "true", "yes"),
                   user=unquote(parts.username or ""), password=unquote(parts.password or ""),
                   sender=sender or cls.sender)

    @classmethod
    def from_env(cls):
        """The settings from SMTP_URL, or None when it is unset."""
        url = get("SMTP_URL")
        return cls.from_url(url, get("DIGEST_FROM") or None) if url else None

    def send(self, message):
        """Send one email; raises one of ERRORS when it was not accepted."""
        if message["From"] is None:
            message["From"] = self.sender
        context = ssl.create_default_context()
        if self.tls:
            connection = smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=context)
        else:
            connection = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
        with connection:
            if self.starttls:
                connection.starttls(context=context)
            if self.user:
                connection.login(self.user, self.password)
            connection.send_message(message)
