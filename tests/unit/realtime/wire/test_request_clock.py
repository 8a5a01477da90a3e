"""RequestClock (app/realtime/wire/request_clock.py): a request's reads by one deadline."""
import time

import pytest
from gevent import socket

from app.realtime.wire.request_clock import RequestClock, TooSlow


@pytest.fixture
def pair():
    ours, theirs = socket.socketpair()
    ours.settimeout(5)
    yield ours, theirs
    ours.close()
    theirs.close()


def test_past_the_deadline_what_had_come_is_read_and_nothing_more_is_waited_for(pair):
    ours, theirs = pair
    clock = RequestClock(ours, per_read=5)
    clock.start(1, since=time.monotonic() - 5)  # its first byte came 5 s ago
    theirs.sendall(b"GET / HTTP/1.1\r\n")
    buffer = bytearray(64)
    assert clock.readinto(buffer) == 16
    began = time.monotonic()
    with pytest.raises(TooSlow):
        clock.readinto(buffer)
    assert time.monotonic() - began < 1  # not the per-read 5 s


def test_before_the_deadline_a_read_waits_at_most_what_is_left(pair):
    ours, theirs = pair
    clock = RequestClock(ours, per_read=5)
    clock.start(0.3)
    with pytest.raises(TooSlow):
        clock.readinto(bytearray(64))
    assert ours.gettimeout() == 5  # the per-read timeout is put back
