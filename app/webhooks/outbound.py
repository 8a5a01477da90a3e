"""Where a webhook may point, checked at registration and at every delivery.

A webhook URL is ``http://`` or ``https://``, names a host and carries no
user name or password. Every address its host resolves to must be a public
one: loopback, private, link-local, multicast, reserved, unspecified,
shared (100.64/10) and other non-global ranges are refused, and so are IPv6
addresses that carry such an IPv4 address (IPv4-mapped and -compatible,
NAT64 64:ff9b::/96, 6to4, Teredo: the packet ends up there), unless the setting
``WEBHOOK_ALLOW`` allows them: a comma-separated list of CIDRs
(``127.0.0.1/32``, ``10.0.0.0/8``, ``fd00::/8``) and host names
(``hooks.internal``: that host, whatever it resolves to).

At delivery the host is resolved again and the address checked again (a DNS
answer that changed to 127.0.0.1 after registration is refused), and the
connection goes to that checked address (``post.py``), so no second lookup
can swap it.
"""
import ipaddress
import socket
from urllib.parse import urlsplit

from app.settings import get

MAX_URL_CHARS = 2000


class UrlRefused(ValueError):
    """The URL cannot be a webhook; the message says why (starting ``url: ``)."""


def allow_list(raw=None):
    """``WEBHOOK_ALLOW`` as (networks, host names)."""
    raw = get("WEBHOOK_ALLOW") if raw is None else raw
    networks, hosts = [], set()
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            hosts.add(item.lower().rstrip("."))
    return networks, hosts


def check_allow_setting():
    """Raise SystemExit when ``WEBHOOK_ALLOW`` holds something that is neither a
    CIDR nor a host name."""
    _, hosts = allow_list()
    for host in hosts:
        if "/" in host or not all(part and len(part) < 64 for part in host.split(".")):
            raise SystemExit(f"herald: WEBHOOK_ALLOW: {host!r} is neither a CIDR nor a host name")


def parse(url):
    """``(scheme, host, port, path_and_query)`` of a URL a webhook may use; UrlRefused otherwise."""
    if not isinstance(url, str) or not url:
        raise UrlRefused("url: is required: an http:// or https:// URL")
    if len(url) > MAX_URL_CHARS:
        raise UrlRefused(f"url: is over {MAX_URL_CHARS} characters")
    if any(ord(c) <= 32 or ord(c) == 127 for c in url):
        raise UrlRefused("url: must not contain spaces or control characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise UrlRefused("url: must start with http:// or https://")
    if parts.username is not None or parts.password is not None:
        raise UrlRefused("url: must not carry a user name or password")
    if parts.fragment:
        raise UrlRefused("url: must not have a #fragment")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise UrlRefused("url: has a port that is not a number from 1 to 65535") from None
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UrlRefused("url: names no host")
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return parts.scheme, host, port, target


# IPv6 forms that carry an IPv4 address: a packet to one ends up at that IPv4 address (through
# a 6to4 or Teredo relay, a NAT64 gateway, or a dual stack), so each is judged by it as well.
NAT64 = ipaddress.ip_network("64:ff9b::/96")       # RFC 6052: translated to the last 32 bits
COMPATIBLE = ipaddress.ip_network("::/96")         # RFC 4291's deprecated IPv4-compatible form


def _judged(address):
    """The address to judge: an IPv4-mapped or NAT64 address is its IPv4 address (the
    packet goes to it, whatever the IPv6 address's own class)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.version == 6 and ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip


def carried(ip):
    """``(form, IPv4 address)`` for each IPv4 address the IPv6 address ``ip`` carries."""
    if ip.version != 6:
        return []
    if ip.ipv4_mapped:
        return [("IPv4-mapped", ip.ipv4_mapped)]
    if ip in NAT64:
        return [("NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))]
    if ip in COMPATIBLE and int(ip) > 1:  # not :: nor ::1, which are themselves
        return [("IPv4-compatible", ipaddress.IPv4Address(int(ip)))]
    if ip.sixtofour:
        return [("6to4", ip.sixtofour)]
    if ip.teredo:
        server, client = ip.teredo
        return [("Teredo", client), ("Teredo", server)]
    return []


def _class(ip):
    for flag in ("loopback", "unspecified", "link_local", "multicast", "reserved", "private"):
        if getattr(ip, f"is_{flag}"):
            return flag.replace("_", "-")
    if not ip.is_global:
        return "not public"
    return None


def refusal(ip):
    """Why ``ip`` is not a public address (``"loopback"``, or for an IPv6 address that
    carries a refused IPv4 one ``"6to4 address that carries 127.0.0.1, a loopback"``),
    or None when it is public."""
    for form, inner in carried(ip):
        why = _class(inner)
        if why:
            return f"{form} address that carries {inner}, {_a(why)}"
    if ip.version == 6 and (ip.ipv4_mapped or ip in NAT64):
        return None  # judged by the public IPv4 address it carries
    return _class(ip)


def _a(word):
    return ("an " if word[0] in "aeiouAEIOU" else "a ") + word


def resolve(host, port, allowed=None):
    """The addresses of ``host`` a webhook may connect to, in resolver order;
    UrlRefused when it does not resolve or any of its addresses is refused."""
    networks, hosts = allowed or allow_list()
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UrlRefused(f"url: the host {host!r} does not resolve ({exc})") from None
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if host.lower() in hosts:
        return addresses
    for address in addresses:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        why = refusal(ip)
        judged = _judged(address)
        if why and not any(judged.version == net.version and judged in net for net in networks):
            raise UrlRefused(f"url: {host} resolves to {ip}, {_a(why)} address; webhooks go "
                             "to public addresses only (WEBHOOK_ALLOW lists exceptions)")
    return addresses


def check(url, allowed=None):
    """Return ``url`` when a webhook may point there now; UrlRefused naming ``url`` otherwise."""
    _, host, port, _ = parse(url)
    resolve(host, port, allowed)
    return url
