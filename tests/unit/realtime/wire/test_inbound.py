"""Websocket frames parsed from bytes already read (app/realtime/wire/inbound.py)."""
import os

import pytest
import websocket

from app.realtime.wire.inbound import FrameTooLarge, ProtocolError, close_code, parse_frame, unmask


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
