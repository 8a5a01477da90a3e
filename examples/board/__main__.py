"""``python -m examples.board``: serve the example on ``EXAMPLE_HOST``:``EXAMPLE_PORT``.

With ``HERALD_OUTBOX_RELAY`` on (the default) the outbox relay starts here at
once, so that rows an earlier process committed and never shipped (it died,
or Herald was away) go out now rather than at this process's first change.
"""
import logging
import os

from werkzeug.serving import run_simple

from .app import create_app
from .live import herald

logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
app = create_app()
if app.config["HERALD_OUTBOX_RELAY"]:
    with app.app_context():
        herald.start_relay()  # Herald: ships what earlier processes left
host = os.environ.get("EXAMPLE_HOST", "127.0.0.1")
port = int(os.environ.get("EXAMPLE_PORT", "5001"))
print(f"board: the example is at http://{host}:{port}/", flush=True)
run_simple(host, port, app, threaded=True)
