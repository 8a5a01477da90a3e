"""Where a redirect may send the reader back to (app/web/safe_redirect.py): a path of
this site, as the pages send it, or else "/". Browsers (and werkzeug) strip tab, CR
and LF from a URL and read a backslash as a slash, so ``/\\tevil.com`` checked as a
path arrives as ``//evil.com``, another host; a CR or LF in a header is a 500.
Issue 35: ``/language?next=/%09/evil.com`` answered ``Location: //evil.com``."""
import pytest

from app.web.safe_redirect import safe_target

HOSTILE = [
    None, "", "x", "evil.com", "//evil.com", "///evil.com", "////evil.com",
    "https://evil.com", "https:/evil.com", "javascript:alert(1)", "/\\evil.com",
    "\\/evil.com", "\\\\evil.com", "/\t/evil.com", "/\t\\evil.com", "\t//evil.com",
    "/\n/evil.com", "/\r/evil.com", "/\r\n/evil.com", "/x\r\nSet-Cookie: a=b",
    "/x\nLocation: //evil.com", " /x", "/x ", "/ x", "/x\x00", "/x\x1b", "/x\x7f",
    "/\x0b/evil.com", "/\x0c/evil.com", "\x00//evil.com",
    "/x\u2028y", "/x\u2029y", "/x\u0085y", "/x\u00a0y", "/x\u3000y", "/x\u200by",
    "/x\u202ey", "/\uff0fevil.com", "/\u2215evil.com", "/\ufffd",
    "/%2fevil.com", "/%2Fevil.com", "/%5cevil.com", "/%5Cevil.com", "/%09/evil.com",
    "/%0d%0aSet-Cookie:%20a=b", "/%00", "/../evil.com", "/./x", "/x/../..//evil.com",
    "/%2e%2e/x", "/" + "a" * 5000,
]
SAME_SITE = ["/", "/login", "/preferences", "/jobs?tab=failed", "/?q=%C3%BCber&topic=ops.db",
             "/?open=1700000000000-0#detail", "/digests", "/a/b-c_d.e~f"]


@pytest.mark.parametrize("target", HOSTILE)
def test_anything_but_a_plain_path_of_this_site_falls_back(target):
    assert safe_target(target) == "/"
    assert safe_target(target, "/login") == "/login"


@pytest.mark.parametrize("target", SAME_SITE)
def test_a_path_of_this_site_is_kept_as_it_is(target):
    assert safe_target(target) == target


@pytest.mark.parametrize("target", [t for t in HOSTILE if t is not None])
def test_the_language_switch_never_leaves_the_site_nor_fails(client, target):
    answer = client.get("/language", query_string={"lang": "de", "next": target})
    assert answer.status_code == 302
    assert answer.headers["Location"] == "/"
    assert all(c.startswith("herald_lang=de;") for c in answer.headers.getlist("Set-Cookie"))


@pytest.mark.parametrize("raw", [
    "/%09/evil.com", "/%0a/x", "/%0d%0aSet-Cookie:%20a=b", "/%0d/x", "%09//evil.com",
    "/%5cevil.com", "/%5c%5cevil.com", "//evil.com", "///evil.com", "https://evil.com",
    "%20/x", "/x%e2%80%a8y", "/x%c2%85y", "/x%00",
])
def test_the_language_switch_as_the_attacker_wrote_it(client, raw):
    """The query string as sent (issue 35's: a tab the browser strips, a CR/LF that
    was a 500 with a traceback)."""
    answer = client.get(f"/language?lang=de&next={raw}")
    assert answer.status_code == 302, answer.get_data(as_text=True)[:300]
    assert answer.headers["Location"] == "/"


@pytest.mark.parametrize("target", SAME_SITE)
def test_the_language_switch_goes_back_to_the_page(client, target):
    answer = client.get("/language", query_string={"lang": "de", "next": target})
    assert answer.status_code == 302 and answer.headers["Location"] == target
