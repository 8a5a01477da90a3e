"""``make example-adopt``: Herald and Chirp (examples/adopt, the app docs/adopt.md builds)
side by side.

- Herald as ``make run`` starts it (bin/stack.py), told to accept Chirp's
  connection tokens (``JWT_SECRET``) and its origin (``SOCKETIO_ORIGINS``);
- Chirp on ``CHIRP_PORT`` (5002) under ``flask run``, with an API key of its own
  (made once and kept in ``var/chirp/``, where its SQLite database also lives)
  and the same JWT secret, so that it publishes and mints tokens for its own
  users; its database migrated (``flask db upgrade``) and its demo users made
  (``flask seed``) first;
- Chirp's RQ worker (``python -m chirp.worker``), on database 1 of Herald's Redis.
"""
import secrets
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bin"))

import stack  # noqa: E402
from example import api_key, secret_file  # noqa: E402

from app.settings import get, var_dir  # noqa: E402
from app.settings import port as config_port  # noqa: E402

KEY_NAME = "example-chirp"
CHIRP = ROOT / "examples" / "adopt"


def redis_database(url, number):
    """``url`` (Herald's Redis) with database ``number``: Chirp's jobs apart from Herald's keys."""
    parts = urlsplit(url)
    if parts.scheme == "unix":  # unix:///path/redis.sock (urlunsplit would drop the //)
        return f"{url.split('?', 1)[0]}?db={number}"
    return urlunsplit(parts._replace(path=f"/{number}"))


def main():
    folder = var_dir() / "chirp"
    port, chirp = config_port(), get("CHIRP_PORT")
    jwt_secret = secret_file(folder / "jwt_secret", lambda: secrets.token_urlsafe(48))
    origin = f"http://127.0.0.1:{chirp}"
    origins = ",".join([*get("SOCKETIO_ORIGINS"), origin])

    def children(client, env):
        fresh = not (folder / "chirp.db").exists()
        chirp_env = dict(
            env, PYTHONUNBUFFERED="1", PYTHONPATH=str(CHIRP), FLASK_APP="chirp",
            DATABASE_URL=f"sqlite:///{folder / 'chirp.db'}",
            REDIS_URL=redis_database(env["REDIS_URL"], 1), CHIRP_URL=origin,
            SECRET_KEY=secret_file(folder / "secret_key", lambda: secrets.token_hex(32)),
            HERALD_URL=f"http://127.0.0.1:{port}", HERALD_API_KEY=api_key(client, folder, KEY_NAME),
            HERALD_JWT_SECRET=jwt_secret)
        flask = [stack.PY, "-m", "flask"]
        subprocess.run([*flask, "db", "upgrade"], cwd=CHIRP, env=chirp_env, check=True)
        subprocess.run([*flask, "seed", *(["--posts", "3"] if fresh else [])], cwd=CHIRP,
                       env=chirp_env, check=True)
        stack.say(f"Chirp is at {origin}/  (alice@chirp.test, bob@chirp.test, carol@chirp.test; "
                  "password chirp-demo)")
        return [stack.Child("chirp", [*flask, "run", "--host", "127.0.0.1", "--port", str(chirp),
                                      "--no-reload", "--no-debugger"], chirp_env),
                stack.Child("chirp worker", [stack.PY, "-m", "chirp.worker"], chirp_env)]

    stack.main(extra_env={"JWT_SECRET": jwt_secret, "SOCKETIO_ORIGINS": origins},
               extra_children=children)


if __name__ == "__main__":
    main()
