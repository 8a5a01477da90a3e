"""Where a webhook may point: the address rules and the allow-list setting (the worker's
refusal of a setting it cannot use: tests/integration/webhooks/test_outbound.py)."""
import ipaddress

import pytest

from app.webhooks import outbound


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
