"""The client's address behind trusted proxies, canonical (app/web/addresses.py)."""
import pytest

from app.web.addresses import canonical, client_address


@pytest.mark.parametrize("text, address", [
    ("9.9.9.9", "9.9.9.9"), ("9.9.9.9:1234", "9.9.9.9"), ("::ffff:9.9.9.9", "9.9.9.9"),
    ("009.9.9.9", "9.9.9.9"), ("[::ffff:9.9.9.9]:443", "9.9.9.9"), ("::FFFF:909:909", "9.9.9.9"),
    (" 9.9.9.9 ", "9.9.9.9"), ("[2001:DB8:0::9]:80", "2001:db8::9"), ("2001:db8:0:0::9", "2001:db8::9"),
    ("fe80::1%eth0", "fe80::1"),
])
def test_each_spelling_of_an_address_is_one(text, address):
    assert canonical(text) == address


@pytest.mark.parametrize("text", ["", "unknown", "_hidden", "9.9.9.9.9", "256.1.1.1", "0x9.9.9.9",
                                  "[::1", "[::1]x", "[::1]:", "1.2.3.4:", "1.2.3.4:http",
                                  "host.example:80", "a b"])
def test_what_is_not_an_address_is_none(text):
    assert canonical(text) is None


def test_not_an_address_counts_as_the_proxy_s_own():
    environ = {"REMOTE_ADDR": "unknown", "werkzeug.proxy_fix.orig": {"REMOTE_ADDR": "::ffff:10.0.0.2"}}
    client_address(environ)
    assert environ["REMOTE_ADDR"] == "10.0.0.2"
