"""app/ops/redact.py: credentials hidden from logged request lines, however spelled."""
import pytest

from app.ops.redact import redact_requestline, redact_target


@pytest.mark.parametrize("target,expected", [
    ("/api/stream?token=abc", "/api/stream?token=[redacted]"),
    ("/api/stream?%74oken=abc&last_id=5", "/api/stream?%74oken=[redacted]&last_id=5"),
    ("/x?TOKEN=abc", "/x?TOKEN=[redacted]"),
    ("/x?a=1&tok%65n+=abc", "/x?a=1&tok%65n+=[redacted]"),
    ("/x?access_token=a&api%5Fkey=b&password=c&jwt=d&key=e&stream_token=f",
     "/x?access_token=[redacted]&api%5Fkey=[redacted]&password=[redacted]&jwt=[redacted]"
     "&key=[redacted]&stream_token=[redacted]"),
    ("/socket.io/?EIO=4&transport=polling&sid=s1", "/socket.io/?EIO=4&transport=polling&sid=[redacted]"),
    ("/x?a=1;token=abc", "/x?a=1;token=[redacted]"),
    ("/x?token", "/x?token"),           # no value: nothing to hide
    ("/x?after=0&limit=5&topic=ops", "/x?after=0&limit=5&topic=ops"),
    ("/x?%E0%A4%A=1&token=%ZZ", "/x?%E0%A4%A=1&token=[redacted]"),  # bad escapes: no error
    ("/no-query", "/no-query"),
])
def test_secret_values_are_hidden_on_the_parsed_names(target, expected):
    assert redact_target(target) == expected


def test_request_lines_keep_method_and_version():
    assert redact_requestline("GET /s?token=t HTTP/1.1") == "GET /s?token=[redacted] HTTP/1.1"
    assert redact_requestline("GARBAGE?token=t") == "GARBAGE?token=[redacted]"
    assert redact_requestline(None) is None


def test_free_text_quoting_a_request_line():
    from app.ops.redact import redact_text
    said = "Invalid http version: 'GET /s?a=1&%74oken=abc;jwt=x HTTP/9.9' (from 127.0.0.1)"
    assert redact_text(said) == \
        "Invalid http version: 'GET /s?a=1&%74oken=[redacted];jwt=[redacted] HTTP/9.9' (from 127.0.0.1)"
