"""``make example``: Herald and the example host app (examples/board) side by side.

- Herald as ``make run`` starts it (bin/stack.py), told to accept the
  example's connection tokens (``JWT_SECRET``) and its origin
  (``SOCKETIO_ORIGINS``);
- the example on ``EXAMPLE_PORT`` (5001), with an API key of its own (made
  once and kept in ``var/example/``, where its database also lives) and the
  same JWT secret, so that it publishes and mints tokens for its own users.

Beside a running ``make run`` it finds its own places (:func:`free_places`):
a setting whose default (or ``.env`` value, which ``make run`` shares) is
taken (``VAR_DIR`` with a stack running in it, ``PORT``, ``EXAMPLE_PORT``,
the three ``BRIDGE_*`` endpoints) gets a free one, said in one line each, and
the URLs it prints are the ones it chose. A setting given on the command line
(``PORT=5100 make example``) is kept, and refused as ``make run`` refuses it
when it is taken.
"""
import contextlib
import os
import secrets
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bin"))

import stack  # noqa: E402

from app.settings import (  # noqa: E402
    export,
    get,
    is_set,
    load_env_file,
    var_dir,
)
from app.settings import port as config_port  # noqa: E402
from app.users import accounts  # noqa: E402

KEY_NAME = "example-board"


def secret_file(path, make):
    """The content of ``path``, made by ``make()`` (mode 0600) the first time."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(make())
    return path.read_text().strip()


def api_key(client, folder, name=KEY_NAME):
    """An example's API key (``name``): the one kept in ``folder``, or a new one when
    Herald no longer knows it (its Redis was emptied, say)."""
    path = folder / "api_key"
    if path.exists() and accounts.api_key_name(client, path.read_text().strip()) == name:
        return path.read_text().strip()
    try:
        accounts.revoke_api_key(client, name)
    except accounts.AccountError:
        pass  # there was none
    key = accounts.create_api_key(client, name)
    path.unlink(missing_ok=True)
    return secret_file(path, lambda: key)


def any_free_port(host, held):
    """A port on ``host`` that nothing listens on now (the kernel's choice). The probe
    stays bound in ``held`` until every choice is made, so two settings never get the
    same port (the kernel may hand a just-closed port out again)."""
    probe = held.enter_context(socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET))
    probe.bind((host, 0))
    return probe.getsockname()[1]


def free_places():
    """Give each setting that is unset and whose default is taken a free one (in this
    process's environment, which the stack hands to its children); a line per choice."""
    if not is_set("VAR_DIR"):
        taken = var_dir()
        pid, running = stack.stack_pid(taken)
        if running:
            export("VAR_DIR", taken / "example-stack")
            stack.say(f"a stack (pid {pid}) runs in {taken}: the example's Herald keeps "
                      f"its state in {var_dir()} (VAR_DIR)")
    with contextlib.ExitStack() as held:
        _free_ports(get("HOST"), held)


def _free_ports(host, held):
    for name in ("PORT", "EXAMPLE_PORT"):
        if not is_set(name) and not stack.port_free(host, get(name)):
            taken, chosen = get(name), any_free_port(host, held)
            export(name, chosen)
            stack.say(f"port {taken} is taken: {name}={chosen}")
    for name in ("BRIDGE_PULL", "BRIDGE_XPUB", "BRIDGE_ROUTER"):
        endpoint = urlsplit(get(name))
        bind_host = "0.0.0.0" if endpoint.hostname == "*" else endpoint.hostname  # noqa: S104
        if (is_set(name) or endpoint.scheme != "tcp" or not endpoint.port
                or stack.port_free(bind_host, endpoint.port)):
            continue
        chosen = f"tcp://{endpoint.hostname}:{any_free_port(bind_host, held)}"
        export(name, chosen)
        stack.say(f"{endpoint.geturl()} is taken: {name}={chosen}")


def main():
    load_env_file()
    free_places()
    folder = var_dir() / "example"
    port = config_port()
    example_port = get("EXAMPLE_PORT")
    jwt_secret = secret_file(folder / "jwt_secret", lambda: secrets.token_urlsafe(48))
    example_origin = f"http://127.0.0.1:{example_port}"
    origins = ",".join([*get("SOCKETIO_ORIGINS"), example_origin])

    def example(client, env):
        example_env = dict(env, HERALD_URL=f"http://127.0.0.1:{port}",
                           HERALD_API_KEY=api_key(client, folder), HERALD_JWT_SECRET=jwt_secret,
                           EXAMPLE_PORT=str(example_port), BOARD_DB=str(folder / "board.db"),
                           EXAMPLE_SECRET_KEY=secret_file(folder / "secret_key",
                                                          lambda: secrets.token_hex(32)))
        stack.say(f"the example board is at {example_origin}/  (users alice, bob, carol; "
                  "password board-demo)")
        return [stack.Child("example", [stack.PY, "-m", "examples.board"], example_env)]

    stack.main(extra_env={"JWT_SECRET": jwt_secret, "SOCKETIO_ORIGINS": origins},
               extra_children=example)


if __name__ == "__main__":
    main()
