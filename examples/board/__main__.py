"""``python -m examples.board``: serve the example on ``EXAMPLE_HOST``:``EXAMPLE_PORT``."""
import logging
import os

from werkzeug.serving import run_simple

from .app import create_app

logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
app = create_app()
host = os.environ.get("EXAMPLE_HOST", "127.0.0.1")
port = int(os.environ.get("EXAMPLE_PORT", "5001"))
print(f"board: the example is at http://{host}:{port}/", flush=True)
run_simple(host, port, app, threaded=True)
