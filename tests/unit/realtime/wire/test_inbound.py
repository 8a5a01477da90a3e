"""Websocket frames and messages parsed from bytes already read (app/realtime/wire/inbound.py)."""
import os

import pytest
import websocket

from app.realtime.wire.inbound import (
    FrameTooLarge,
    MessageParser,
    Over,
    PeerClosed,
    Pong,
    ProtocolError,
    close_code,
    parse_frame,
    unmask,
)
from app.realtime.wire.reader import MAX_FRAME


def client_frame(payload, opcode=websocket.ABNF.OPCODE_TEXT, fin=1, rsv1=0):
    return websocket.ABNF(fin, rsv1, 0, 0, opcode, 1, payload).format()  # masked, as a client's


@pytest.mark.parametrize("size", [0, 5, 125, 126, 65535, 65536, 200_000])
def test_a_masked_frame_is_parsed_whole_and_not_before(size):
    payload = os.urandom(size)
    data = client_frame(payload, websocket.ABNF.OPCODE_BINARY) + b"next"
    for cut in (0, 1, 2, len(data) - 5):
        assert parse_frame(data[:cut]) is None
    fin, opcode, body, end = parse_frame(data)
    assert (fin, opcode, body, data[end:]) == (0x80, 2, payload, b"next")


def test_unmask_is_its_own_inverse():
    mask, payload = b"\x01\x02\x03\x04", os.urandom(1001)
    assert unmask(unmask(payload, mask), mask) == payload


def test_refusals():
    with pytest.raises(ProtocolError) as reserved:
        parse_frame(client_frame("4x", rsv1=1))
    assert reserved.value.code == 1002
    with pytest.raises(ProtocolError):  # a fragmented control frame
        parse_frame(client_frame("p", websocket.ABNF.OPCODE_PING, fin=0))
    with pytest.raises(FrameTooLarge):  # refused from its header alone
        parse_frame(bytes([0x81, 0xFF]) + (2**62).to_bytes(8, "big") + b"\0\0\0\0")


def test_close_codes_as_gevent_websocket_answers_them():
    assert close_code(b"") == (1000, b"")
    assert close_code(b"\x03\xe9bye") == (1001, b"bye")
    for bad, code in ((b"\x03", 1002), (b"\x03\xed", 1002), (b"\x03\xe8\xff", 1007)):
        with pytest.raises(ProtocolError) as refused:
            close_code(bad)
        assert refused.value.code == code


def test_the_parser_returns_whole_messages_however_the_bytes_arrive():
    data = (client_frame("one") + client_frame("tw", fin=0) + client_frame("o", websocket.ABNF.OPCODE_CONT)
            + client_frame(b"\x00\xff", websocket.ABNF.OPCODE_BINARY))
    parser = MessageParser()
    got = []
    for at in range(len(data)):  # a byte at a time: "not yet" until a message is whole
        parser.feed(data[at:at + 1])
        while (message := parser.next_message(100)) is not None:
            got.append(message)
    assert got == ["one", "two", bytearray(b"\x00\xff")]
    assert (parser.buffer, parser.parts, parser.opcode) == (b"", None, 0)


def test_the_parser_hands_back_pings_and_raises_what_ends_the_reading():
    parser = MessageParser()
    parser.feed(client_frame("hi", websocket.ABNF.OPCODE_PING) + client_frame("", websocket.ABNF.OPCODE_PONG)
                + client_frame(b"\x03\xe9bye", websocket.ABNF.OPCODE_CLOSE))
    pong = parser.next_message(100)
    assert isinstance(pong, Pong) and pong.frame == b"\x8a\x02hi"
    with pytest.raises(PeerClosed) as closed:  # the PONG in between is skipped
        parser.next_message(100)
    assert (closed.value.code, closed.value.reason) == (1001, b"bye")
    parser = MessageParser()
    parser.feed(client_frame("x", websocket.ABNF.OPCODE_CONT))
    with pytest.raises(ProtocolError):
        parser.next_message(100)


def test_a_fragmented_message_past_its_bound_is_refused():
    parser = MessageParser()
    parser.feed(client_frame(b"x" * 1000, websocket.ABNF.OPCODE_BINARY, fin=0))
    parser.feed(client_frame(b"x" * MAX_FRAME, websocket.ABNF.OPCODE_CONT))
    with pytest.raises(Over, match="too large"):  # more than MAX_FRAME in all (> 4 x 100 bytes)
        parser.next_message(100)
