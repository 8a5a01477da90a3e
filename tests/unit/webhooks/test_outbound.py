"""Where a webhook may point: the address rules and the allow-list setting (the worker's
refusal of a setting it cannot use: tests/integration/webhooks/test_outbound.py)."""
import ipaddress

import pytest

from app.webhooks import outbound, post


@pytest.mark.parametrize("address, why", [
    ("127.0.0.1", "loopback"), ("::1", "loopback"), ("10.0.0.1", "private"),
    ("172.16.5.4", "private"), ("192.168.1.1", "private"), ("fc00::1", "private"),
    ("169.254.169.254", "link-local"), ("fe80::1", "link-local"), ("0.0.0.0", "unspecified"),
    ("::", "unspecified"), ("224.0.0.1", "multicast"), ("ff02::1", "multicast"),
    ("100.64.0.1", "not public"), ("240.0.0.1", "reserved"),
    ("93.184.216.34", None), ("2606:4700::1111", None),
])
def test_addresses(address, why):
    assert outbound.refusal(ipaddress.ip_address(address)) == why


def test_ipv4_mapped_addresses_are_judged_as_ipv4():
    with pytest.raises(outbound.UrlRefused, match="127.0.0.1, a loopback address"):
        outbound.check("http://[::ffff:127.0.0.1]:8080/")
    with pytest.raises(outbound.UrlRefused, match="10.0.0.1, a private address"):
        outbound.check("http://[::ffff:10.0.0.1]/")


def test_the_allow_list():
    allowed = outbound.allow_list(" 127.0.0.1/32, fd00::/8 ,Hooks.Internal., ")
    assert outbound.check("http://127.0.0.1:9/", allowed)
    with pytest.raises(outbound.UrlRefused, match="127.0.0.2, a loopback"):
        outbound.check("http://127.0.0.2:9/", allowed)
    assert outbound.check("http://[fd00::5]/", allowed)
    assert allowed[1] == {"hooks.internal"}
    assert outbound.allow_list("") == ([], set())


# IPv6 forms that carry an IPv4 address, which is where a packet to them ends up (a 6to4 or
# Teredo relay, a NAT64 gateway, a dual stack): each judged by the IPv4 address it carries.
EMBEDDING = [
    ("2002:7f00:1::", "6to4", "127.0.0.1, a loopback"),
    ("2002:a00:1::1", "6to4", "10.0.0.1, a private"),
    ("2002:a9fe:a9fe::", "6to4", "169.254.169.254, a link-local"),
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo", "127.0.0.1, a loopback"),
    ("::7f00:1", "IPv4-compatible", "127.0.0.1, a loopback"),
    ("::a00:1", "IPv4-compatible", "10.0.0.1, a private"),
    ("64:ff9b::7f00:1", "NAT64", "127.0.0.1, a loopback"),
    ("64:ff9b::c0a8:101", "NAT64", "192.168.1.1, a private"),
    ("::ffff:7f00:1", "IPv4-mapped", "127.0.0.1, a loopback"),
]


@pytest.mark.parametrize("address, form, carried", EMBEDDING)
def test_ipv6_forms_carrying_a_refused_ipv4_are_refused_at_registration(address, form, carried):
    with pytest.raises(outbound.UrlRefused) as refused:
        outbound.check(f"http://[{address}]:8080/hook")
    assert form in str(refused.value) and carried in str(refused.value)


@pytest.mark.parametrize("address, form, carried", EMBEDDING)
def test_ipv6_forms_carrying_a_refused_ipv4_are_refused_at_delivery(address, form, carried):
    """The worker's own check of the resolved address (DNS may answer one after registration):
    nothing is sent, the failure says why, and it is retried like a network error."""
    poster = post.Poster(allowed=outbound.allow_list(""))
    outcome = poster.deliver(f"http://[{address}]:8080/hook", b"{}", {})
    assert not outcome.ok and outcome.status is None and outcome.transient
    assert form in outcome.error and carried in outcome.error
    assert poster.connection is None


def test_forms_carrying_a_public_ipv4_are_judged_by_it():
    """6to4 and NAT64 of a public IPv4 address are public (an IPv6-only network with DNS64
    reaches every IPv4-only host through 64:ff9b::/96); the allow-list still applies."""
    assert outbound.refusal(ipaddress.ip_address("64:ff9b::5db8:d822")) is None
    assert outbound.refusal(ipaddress.ip_address("2002:5db8:d822::1")) is None
    allowed = outbound.allow_list("127.0.0.0/8")
    with pytest.raises(outbound.UrlRefused, match="6to4"):
        outbound.check("http://[2002:7f00:1::]/", allowed)
    assert outbound.check("http://[::ffff:127.0.0.1]/", allowed)
