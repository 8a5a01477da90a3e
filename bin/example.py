"""``make example``: Herald and the example host app (examples/board) side by side.

- Herald as ``make run`` starts it (bin/stack.py), told to accept the
  example's connection tokens (``JWT_SECRET``) and its origin
  (``SOCKETIO_ORIGINS``);
- the example on ``EXAMPLE_PORT`` (5001), with an API key of its own (made
  once and kept in ``var/example/``, where its database also lives) and the
  same JWT secret, so that it publishes and mints tokens for its own users.
"""
import os
import secrets
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bin"))

import stack  # noqa: E402

from app.settings import get, var_dir  # noqa: E402
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


def main():
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
