"""What the transport was written for: library versions, and the upstream code it relies on.

``VERSIONS`` are the releases whose internals this package was read
against; :func:`check_versions` refuses to serve with any other (a clear
message, at start-up), because an upgrade can change an internal without
failing anything. ``SOURCES`` pins, by a digest of its source, every
upstream function the transport replaces, overrides, copies or relies on
the inner workings of; tests/unit/realtime/wire/test_upstream.py fails naming
the one that changed. After an upgrade: read what changed, adapt the
transport, then update both tables (``python -m app.realtime.wire.upstream``
prints the digests).
"""
import hashlib
import importlib
import inspect
from importlib import metadata

VERSIONS = {
    "python-engineio": "4.15.1",
    "python-socketio": "5.18.1",
    "gevent-websocket": "0.10.1",
    "gevent": "26.9.0",
}

# "module:qualified.name" -> the first 16 hex digits of the SHA-256 of its source.
SOURCES = {
    # Herald's Engine.IO server: its queues, driver table and pings (engine.py).
    "engineio.base_server:BaseServer.__init__": "a06b17502fbd9646",
    "engineio.base_server:BaseServer.create_queue": "a384470753d50c77",
    "engineio.base_socket:BaseSocket.__init__": "8532b631a4dc815f",
    "engineio.server:Server.start_background_task": "772bcb984f599240",
    "engineio.server:Server._handle_connect": "049f7c2b2c239080",
    "engineio.socket:Socket.schedule_ping": "fe316639159cd70d",
    "engineio.socket:Socket._send_ping": "21861287bd38dedc",
    # Serving a websocket (websocket.py copies the handler's loop).
    "engineio.socket:Socket._upgrade_websocket": "02f6ac05441609d3",
    "engineio.socket:Socket._websocket_handler": "58afe122719282de",
    "engineio.socket:Socket.send": "f8b2738ee5d48ab2",
    "engineio.socket:Socket.close": "05fac55831999f25",
    "engineio.async_drivers.gevent:WebSocketWSGI": "d35186ab85c7df5d",
    "engineio.packet:Packet.__init__": "26559aaf4a6f4ddd",
    "engineio.packet:Packet.encode": "8f3d5d869711cbb8",
    # python-socketio: the Engine.IO server hook and the dispatch Herald guards (server.py).
    "socketio.base_server:BaseServer.__init__": "6b998e091b34a563",
    "socketio.server:Server._engineio_server_class": "8d7e7034b2457036",
    "socketio.server:Server._handle_eio_message": "65f309c138d634eb",
    "socketio.server:Server._handle_event": "3f64c030f25eb785",
    "socketio.server:Server._handle_eio_disconnect": "5c0002fcdb35a127",
    "socketio.server:Server._handle_eio_connect": "4be135c046ed6bcc",
    "engineio.server:Server.handle_request": "79302edd007fcce6",
    # python-socketio's client manager: rooms indexed per client (app/realtime/wire/manager.py).
    "socketio.base_manager:BaseManager.basic_disconnect": "2933b50bc4b2ea7b",
    "socketio.base_manager:BaseManager.basic_enter_room": "3f509586d2d7f47e",
    "socketio.base_manager:BaseManager.basic_leave_room": "e27f3eea06d1c6a6",
    "socketio.base_manager:BaseManager.get_rooms": "56a1017f85af9f91",
    # gevent-websocket and pywsgi: the handler's reader, writer and buffers (handler.py).
    "geventwebsocket.handler:WebSocketHandler.upgrade_connection": "7c0115438103e1bd",
    "geventwebsocket.websocket:WebSocket.__init__": "db15065066548b15",
    "geventwebsocket.websocket:WebSocket.read_frame": "ab47353ea877d381",
    "geventwebsocket.websocket:Stream.__init__": "6632d1e344067915",
    "gevent.pywsgi:WSGIHandler.__init__": "c3d9e1009c3a0d6a",
    "gevent.pywsgi:WSGIHandler.get_environ": "fbd39b74e42d7dbf",
    # pywsgi: the request deadline (handler.py) and admission (app/realtime/wire/admission.py).
    "gevent.pywsgi:WSGIHandler.handle": "9e7238affc125354",
    # (its head's deadline: read_requestline reads the head through the RequestClock,
    # read_request ends it, and a timeout while parsing is _handle_client_error's)
    "gevent.pywsgi:WSGIHandler.read_requestline": "72173107a177f9b3",
    "gevent.pywsgi:WSGIHandler.read_request": "b1702b63da71633f",
    "gevent.pywsgi:WSGIHandler._handle_client_error": "a3fbde482b69b9fd",
    "gevent.pywsgi:WSGIServer.handle": "2f3079ba9ee5bdd2",
    # pywsgi: the access log's line and the error log, redacted of credentials (handler.py).
    "gevent.pywsgi:WSGIHandler.format_request": "c174ca5d4c62043b",
    "gevent.pywsgi:WSGIHandler.log_error": "e45202b4879ac40d",
    "geventwebsocket.handler:WebSocketHandler.log_request": "9ca977fdbda1525b",
    # A websocket read from the hub (connection.py): gevent-websocket's reading copied
    # (frames, control frames, the close handshake), its handler's run_websocket
    # overridden and its WebSocket's __del__ (a close frame) disarmed (handler.py);
    # python-engineio's receive (a PONG does not block, run in the hub), its
    # _service_task (replaced by sweep.py: started by handle_request, stopped by
    # shutdown, closing with check_ping_timeout); pywsgi's loop ended, and the
    # socket kept open past its handler (handler.py, admission.py).
    "geventwebsocket.websocket:WebSocket.read_message": "4f7e79b76a8e8fca",
    "geventwebsocket.websocket:WebSocket.handle_close": "d9084e8c8efe47c1",
    "geventwebsocket.websocket:WebSocket._is_valid_close_code": "a7c8ddcd7cde808e",
    "geventwebsocket.websocket:WebSocket.__del__": "9212d3ef76dbf4e7",
    "geventwebsocket.websocket:WebSocket.close": "528338fe180af5f4",
    "geventwebsocket.websocket:WebSocket.current_app.fget": "28f080cef1f51b76",
    "geventwebsocket.websocket:Header.decode_header": "c4197b5c1bab821b",
    "geventwebsocket.handler:WebSocketHandler.run_websocket": "a3c4964039a9518b",
    "engineio.socket:Socket.receive": "4126eb2537d0d020",
    "engineio.server:Server._service_task": "9492b7b0d652907d",
    "engineio.server:Server.shutdown": "65281c2fdcc2fd59",
    "engineio.socket:Socket.check_ping_timeout": "ccddc110d9836176",
    "gevent.pywsgi:WSGIHandler.handle_one_request": "14e946e9fb33cbb8",
    "gevent.server:StreamServer.do_close": "728ac328c4119488",
    "gevent.baseserver:_handle_and_close_when_done": "154d4884705bb589",
    # Parking a connection without a greenlet (admission.py): do_handle is overridden, and
    # relied on to hand its arguments, whatever they are, to handle() and do_close().
    "gevent.baseserver:BaseServer.do_handle": "a7060ef181a224fe",
}


class UpstreamChanged(SystemExit):
    """The installed libraries are not those the transport was written for."""


def installed_versions():
    return {name: metadata.version(name) for name in VERSIONS}


def check_versions(installed=None):
    """Raise UpstreamChanged, naming each library that differs, unless the installed
    versions are VERSIONS."""
    installed = installed or installed_versions()
    wrong = [f"{name} {installed.get(name)} (written for {want})"
             for name, want in VERSIONS.items() if installed.get(name) != want]
    if wrong:
        raise UpstreamChanged(
            "herald: the websocket transport (app/realtime/wire) relies on these "
            "libraries' internals, and they are not the versions it was written for: "
            + "; ".join(wrong) + ". Install requirements.txt, or review the transport "
            "(docs/realtime.md) and update app/realtime/wire/upstream.py.")


def resolve(name):
    """The object named ``module:qualified.name``."""
    module, _, qualified = name.partition(":")
    found = importlib.import_module(module)
    for part in qualified.split("."):
        found = getattr(found, part)
    return found


def digest(name):
    """The first 16 hex digits of the SHA-256 of the source of ``name``."""
    return hashlib.sha256(inspect.getsource(resolve(name)).encode()).hexdigest()[:16]


if __name__ == "__main__":
    for pinned in SOURCES:
        print(f'    "{pinned}": "{digest(pinned)}",')
