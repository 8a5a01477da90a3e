"""Credentials kept out of logs: :func:`redact_target` hides the value of every
query parameter whose name is a secret's, however the name is spelled.

A name is judged as a reader would read it: percent-decoded (Werkzeug reads
``?%74oken=`` as ``token``, so that is the stream token), ``+`` as a space,
case and punctuation ignored (``TOKEN``, ``api%5Fkey``, ``token%00`` are not
read as credentials by Herald, but a client that sent them meant one, and
another reader may take them). Pieces are split on ``&`` and ``;`` alike: a
reader that splits on either is covered, and hiding too much costs nothing.
"""
import re
from urllib.parse import unquote_plus

MARK = "[redacted]"
# Names (lower case, letters and digits only) that are a credential by themselves,
# and words that make any name containing them one (stream_token, refresh_token...).
SECRET_NAMES = frozenset({"key", "auth", "authorization", "sid", "signature", "sig", "code"})
SECRET_WORDS = ("token", "password", "passwd", "secret", "apikey", "jwt", "credential")
_SEPARATORS = re.compile(r"([&;])")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


def is_secret(name):
    """True when the raw query name ``name`` names a credential."""
    plain = _NOT_ALNUM.sub("", unquote_plus(name, errors="replace").casefold())
    return plain in SECRET_NAMES or any(word in plain for word in SECRET_WORDS)


def redact_query(query):
    """``query`` (raw, as sent) with the value of every secret parameter replaced by MARK."""
    pieces = _SEPARATORS.split(query)
    for index in range(0, len(pieces), 2):
        name, equals, value = pieces[index].partition("=")
        if value and is_secret(name):
            pieces[index] = f"{name}={MARK}"
    return "".join(pieces)


def redact_target(target):
    """A request target (``/path?query``) with its secret parameters' values hidden."""
    path, mark, query = target.partition("?")
    return path + mark + redact_query(query) if mark else target


# A query parameter anywhere in free text (an error message quoting a request line).
_IN_TEXT = re.compile(r"""([?&;])([^=&;\s'"?]+)=([^&;\s'"]*)""")


def redact_text(text):
    """``text`` with the value of every secret query parameter in it hidden."""
    return _IN_TEXT.sub(lambda m: f"{m[1]}{m[2]}={MARK}" if is_secret(m[2]) else m[0], text)


def redact_requestline(line):
    """A request line (``GET /path?query HTTP/1.1``) with its secret parameters' values hidden."""
    if not line or "?" not in line:
        return line
    head, space, version = line.rpartition(" ")
    if not version.startswith("HTTP/"):
        head, space, version = line, "", ""
    return redact_target(head) + space + version
