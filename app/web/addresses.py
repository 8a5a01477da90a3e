"""The client's address behind trusted proxies, in one canonical form.

With ``TRUSTED_PROXIES`` Herald takes the client's address from the proxies'
``X-Forwarded-For`` (ProxyFix, app/web/security.py), as text some proxy
wrote: ``9.9.9.9:1234`` (with a port), ``[2001:db8::1]:443``,
``::ffff:9.9.9.9`` (IPv4-mapped, from a dual-stack listener), ``009.9.9.9``,
``2001:DB8:0::1``. Everything that counts per client address (sign-in and
token rate limits, MAX_SESSIONS_PER_ADDRESS for Socket.IO and event streams)
reads ``REMOTE_ADDR``; so that one client is one address whatever the
spelling, :func:`canonical` rewrites it once, right after ProxyFix:
no port, an IPv4-mapped IPv6 address as its IPv4 one, leading zeros of an
IPv4 octet dropped (decimal), IPv6 compressed and lower-case, no zone.

A value that is not an address at all (``unknown``, an obfuscated RFC 7239
identifier, garbage from a client the proxy passed through) is counted as
the proxy's own address (the connection's peer): all such requests share
one count, so no made-up value buys a fresh one.
"""
import ipaddress
import re

_DOTTED = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")


def canonical(text):
    """``text`` (an address as a proxy wrote it) in canonical form, or None when it is
    not an IP address."""
    value = text.strip()
    if value.startswith("["):  # [v6] or [v6]:port
        end = value.find("]")
        rest = value[end + 1:] if end > 0 else "?"
        if rest and not (rest[0] == ":" and rest[1:].isdigit()):
            return None
        value = value[1:end]
    elif value.count(":") == 1:  # v4:port
        value, port = value.split(":")
        if not port.isdigit():
            return None
    value = value.split("%", 1)[0]  # a zone (fe80::1%eth0) says nothing of the client
    if _DOTTED.fullmatch(value):  # leading zeros: read as decimal (ipaddress refuses them)
        value = ".".join(str(int(octet)) for octet in value.split("."))
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address)


def client_address(environ):
    """Rewrite ``environ``'s REMOTE_ADDR (ProxyFix's, from X-Forwarded-For) in canonical
    form; not an address: the proxy's own (the peer's, as ProxyFix kept it)."""
    address = canonical(environ.get("REMOTE_ADDR") or "")
    if address is None:
        peer = environ.get("werkzeug.proxy_fix.orig", {}).get("REMOTE_ADDR") or ""
        address = canonical(peer) or peer
    environ["REMOTE_ADDR"] = address
