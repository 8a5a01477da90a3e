"""The websocket frames the fan-out loop writes itself (RFC 6455, 5.2)."""
import struct

import pytest

from app.realtime.wire.frames import websocket_frame


@pytest.mark.parametrize("size, header", [
    (0, bytes((0x81, 0))),
    (125, bytes((0x81, 125))),
    (126, struct.pack("!BBH", 0x81, 126, 126)),
    (65535, struct.pack("!BBH", 0x81, 126, 65535)),
    (65536, struct.pack("!BBQ", 0x81, 127, 65536)),
])
def test_final_unmasked_text_frame_with_the_shortest_length_encoding(size, header):
    payload = b"x" * size
    assert websocket_frame(payload) == header + payload
