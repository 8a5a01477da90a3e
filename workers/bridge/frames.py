"""What a ZeroMQ peer sent, checked by the very rules ``publish()`` uses.

Fire-and-forget (PULL): two frames ``[topic, json_envelope_without_id_ts]``;
the JSON may leave ``topic`` out (the frame says it) but must not contradict it.
Confirmed (ROUTER): one frame of JSON after the peer's routing frames: a REQ
peer's ``[identity, b"", json]`` (also with REQ_CORRELATE's request id), or a
DEALER's ``[identity, json]``. The reply goes back along the same route.

Anything else raises :class:`BadFrame`, whose ``kind`` names the fault for the
bridge's counters and whose message is the error a confirmed peer is sent.
:func:`checked` turns any other exception (a bug) into one too, so that no
message, however odd, can stop the bridge or cost the messages behind it.
"""
from app.stream import strict_json
from app.stream.envelope import MAX_ENVELOPE_BYTES, EnvelopeError
from app.stream.publish import prepare


class BadFrame(ValueError):
    """A message the bridge cannot accept; ``kind`` is one of KINDS."""

    KINDS = ("frame_count", "too_large", "not_json", "invalid_envelope", "private", "internal")

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def _envelope(payload):
    if len(payload) > MAX_ENVELOPE_BYTES:
        raise BadFrame("too_large", f"envelope: must be at most {MAX_ENVELOPE_BYTES} bytes encoded")
    try:
        envelope = strict_json.loads(payload)
    except strict_json.JSONError as exc:
        raise BadFrame("not_json", f"envelope: {exc}") from None
    if not isinstance(envelope, dict):
        raise BadFrame("invalid_envelope", "envelope: must be a JSON object")
    return envelope


def _prepare(envelope):
    try:
        return prepare(envelope)
    except EnvelopeError as exc:
        raise BadFrame("invalid_envelope", str(exc)) from None


def checked(read, frames):
    """``read(frames)``, with any exception but BadFrame made a BadFrame("internal")."""
    try:
        return read(frames)
    except BadFrame:
        raise
    except Exception as exc:  # a bug: logged with its traceback by the caller, counted
        raise BadFrame("internal", "envelope: could not be checked (an internal error, "
                                   "logged); not stored") from exc


def from_pull(frames):
    """The Prepared notification in a fire-and-forget message."""
    if len(frames) != 2:
        raise BadFrame("frame_count", f"message: must be 2 frames [topic, json], not {len(frames)}")
    topic_frame, payload = frames
    envelope = _envelope(payload)
    try:
        topic = topic_frame.decode()
    except UnicodeDecodeError:
        raise BadFrame("invalid_envelope", "topic: frame is not UTF-8") from None
    if "topic" not in envelope:
        envelope["topic"] = topic
    elif envelope["topic"] != topic:
        raise BadFrame("invalid_envelope", "topic: the topic frame and the envelope's topic differ")
    return _prepare(envelope)


def split_route(frames):
    """(route frames, the rest) of a ROUTER message: the reply goes back along the route."""
    if b"" in frames[1:]:
        delimiter = frames.index(b"", 1)
        return frames[:delimiter + 1], frames[delimiter + 1:]
    return frames[:1], frames[1:]


def from_router(rest):
    """The Prepared notification in a confirmed request (the frames after its route)."""
    if len(rest) != 1:
        raise BadFrame("frame_count", f"request: must be one frame of JSON, not {len(rest)}")
    return _prepare(_envelope(rest[0]))
