"""Who may talk to the bridge: anyone on this machine, or CURVE-authenticated peers.

The bridge binds to loopback by default. To bind anywhere else it needs CURVE
keys, or it refuses to start: a server key pair (``BRIDGE_CURVE_SECRET``, the
``.key_secret`` file) and a folder of the public keys of the clients allowed
in (``BRIDGE_CURVE_CLIENTS``, ``*.key`` files). With keys set, CURVE is on
for every socket, loopback included. Keys are made with
``python -m workers.zmq_bridge keygen DIR --name NAME`` (zmq.auth's format);
the folder is read at start, so a new client key needs a restart.
"""
import ipaddress
import logging
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

log = logging.getLogger("herald.bridge")


def is_loopback(endpoint):
    """True for ipc://, inproc:// and tcp:// endpoints on a loopback address."""
    scheme, _, rest = endpoint.partition("://")
    if scheme in ("ipc", "inproc"):
        return True
    if scheme != "tcp":
        return False
    host = rest.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # '*', an interface name or a host name: not known to be loopback
        return False


class Curve:
    """The bridge's CURVE setup: checked at construction, applied to each socket."""

    def __init__(self, settings):
        self.enabled = bool(settings.curve_secret or settings.curve_clients)
        exposed = [e for e in settings.endpoints() if not is_loopback(e)]
        if exposed and not self.enabled:
            raise SystemExit(
                f"zmq bridge: refusing to bind {', '.join(exposed)} without CURVE keys; set "
                "BRIDGE_CURVE_SECRET and BRIDGE_CURVE_CLIENTS (make keys with "
                "`python -m workers.zmq_bridge keygen DIR --name NAME`)")
        self.authenticator = None
        if self.enabled:
            self.public, self.secret = self._server_keys(settings.curve_secret)
            self.clients = self._clients(settings.curve_clients)

    @staticmethod
    def _server_keys(path):
        if not path or not Path(path).is_file():
            raise SystemExit("zmq bridge: BRIDGE_CURVE_SECRET must name the server's .key_secret "
                             f"file, not {path!r}")
        public, secret = zmq.auth.load_certificate(path)
        if secret is None:
            raise SystemExit(f"zmq bridge: {path} holds no secret key (use the .key_secret file)")
        return public, secret

    @staticmethod
    def _clients(folder):
        if not folder or not Path(folder).is_dir():
            raise SystemExit("zmq bridge: BRIDGE_CURVE_CLIENTS must name a folder of client .key "
                             f"files, not {folder!r}")
        if not list(Path(folder).glob("*.key")):
            raise SystemExit(f"zmq bridge: no client public keys (*.key) in {folder}")
        return str(folder)

    def start(self, context):
        if self.enabled:
            self.authenticator = ThreadAuthenticator(context)
            self.authenticator.start()
            self.authenticator.configure_curve(domain="*", location=self.clients)
            log.info("CURVE on: clients allowed from %s", self.clients)

    def secure(self, socket):
        """Make ``socket`` a CURVE server (when CURVE is on)."""
        if self.enabled:
            socket.curve_secretkey = self.secret
            socket.curve_publickey = self.public
            socket.curve_server = True

    def stop(self):
        if self.authenticator is not None:
            self.authenticator.stop()


def keygen(folder, name):
    """Create ``NAME.key`` (public) and ``NAME.key_secret`` in ``folder``; returns their paths."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    return zmq.auth.create_certificates(folder, name)
