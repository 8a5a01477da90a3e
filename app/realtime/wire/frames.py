"""The bytes of a notification on the wire: Socket.IO events in websocket frames.

The fan-out loop builds a notification's frame once and writes it to every
idle client as it is (fanout.py), so the frame is made here by hand: the
Socket.IO v5 event ``42/notifications,["notification",{...}]`` around the
JSON Redis delivered (never decoded and encoded again), in an unmasked,
final websocket text frame (RFC 6455, 5.2).
"""
import struct


def notifications_frame(namespace, texts, listed=False):
    """The websocket frame of a Socket.IO event carrying notifications (their JSON
    ``texts``): ``notification`` for one, ``notifications`` with a list for more
    (or always, when ``listed``: a replay's pages)."""
    return websocket_frame(f"42{namespace},{event_body(texts, listed)}".encode())


def event_body(texts, listed=False):
    """``["notification", N]`` for one notification's JSON, else (or when ``listed``)
    ``["notifications", [N, ...]]``."""
    if len(texts) == 1 and not listed:
        return '["notification",' + texts[0] + "]"
    return '["notifications",[' + ",".join(texts) + "]]"


def websocket_frame(payload):
    """One unmasked, final websocket text frame (RFC 6455, 5.2) around ``payload`` (UTF-8)."""
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 65536:
        return struct.pack("!BBH", 0x81, 126, size) + payload
    return struct.pack("!BBQ", 0x81, 127, size) + payload
