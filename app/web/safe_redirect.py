"""Where a redirect may send the reader back to: one rule for every user-supplied
target (today the language switch's ``next``, app/web/i18n.py).

A target is kept only when it is a plain path of this site, as the pages write
it (``request.full_path``: percent-encoded beyond printable ASCII):

- printable ASCII only, no space, no backslash: browsers and werkzeug strip tab,
  CR and LF from a URL and read ``\\`` as ``/``, so ``/<tab>/evil.com`` checked
  as a path arrives as ``//evil.com``, another host; a CR or LF in a header is
  a 500 (issue 35); every other control, space or non-ASCII character is
  refused with them, since no page of Herald's writes one;
- one leading ``/``, not two, and no scheme nor host when parsed;
- its path, percent-decoded, neither starts with ``//`` nor holds a backslash,
  a control character or a ``.``/``..`` segment (for whatever decodes it again);
- at most MAX_LENGTH characters (a header a proxy takes).

Anything else is ``fallback`` ("/", the dashboard), never an error.

    redirect(safe_target(request.args.get("next")))
"""
import re
from urllib.parse import unquote, urlsplit

MAX_LENGTH = 2048
_PLAIN = re.compile(r"/(?![/\\])[\x21-\x5b\x5d-\x7e]*")  # printable ASCII but "\"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


def safe_target(target, fallback="/"):
    """``target`` when it is a plain path of this site (see the module), else ``fallback``."""
    if not isinstance(target, str) or len(target) > MAX_LENGTH or not _PLAIN.fullmatch(target):
        return fallback
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return fallback
    path = unquote(parts.path)
    if (path.startswith("//") or _CONTROL.search(path)
            or any(segment in (".", "..") for segment in path.split("/"))):
        return fallback
    return target
