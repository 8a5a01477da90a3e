"""The upgrade tripwire: the transport names the library versions it was written
for and pins the source of every upstream function it relies on."""
import pytest

from app.realtime.wire import upstream


@pytest.mark.parametrize("name", sorted(upstream.SOURCES))
def test_upstream_source_is_what_the_transport_was_written_against(name):
    """Fails naming the upstream function whose source changed: read the change,
    adapt app/realtime/wire, then update its digest in upstream.SOURCES."""
    assert upstream.digest(name) == upstream.SOURCES[name], (
        f"{name} changed upstream: review app/realtime/wire against it "
        "(docs/realtime.md), then update upstream.SOURCES")


def test_the_installed_versions_are_those_it_was_written_for():
    upstream.check_versions()


def test_other_versions_are_refused_with_a_message_naming_them():
    installed = dict(upstream.VERSIONS, **{"python-engineio": "4.99.0"})
    with pytest.raises(upstream.UpstreamChanged, match=r"python-engineio 4\.99\.0 \(written for "
                                                        r"4\.15\.1\)") as refused:
        upstream.check_versions(installed)
    assert "python-socketio" not in str(refused.value)
