"""The example host app: a shared board of cards, with its own users, kept live by Herald.

Everything Herald-specific is marked ``# Herald``: the extension's settings
and ``init_app``, who is signed in (``user_loader``), one ``publish`` per
change, and the background job's private alert. The page renders
``{{ herald_scripts() }}`` and its script connects and syncs (static/board.js).
"""
import os
import secrets
from pathlib import Path

from flask import (
    Flask,
    abort,
    jsonify,
    redirect,
    render_template,
    request,
    send_from_directory,
    session,
    url_for,
)

from herald_client.flask import Herald

from .alerts import AssignmentAlerts
from .store import COLUMNS, DEMO_PASSWORD, CardError, Store

HERE = Path(__file__).resolve().parent
VENDOR = {  # the host app brings its own libraries (here, from the repository's node_modules)
    "jquery.js": "jquery/dist/jquery.min.js",
    "underscore.js": "underscore/underscore-umd-min.js",
    "backbone.js": "backbone/backbone-min.js",
}

herald = Herald()  # Herald


def create_app(config=None):
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=os.environ.get("EXAMPLE_SECRET_KEY") or secrets.token_hex(32),
        SESSION_COOKIE_NAME="board_session",
        SESSION_COOKIE_SAMESITE="Lax",
        BOARD_DB=os.environ.get("BOARD_DB", "board.db"),
        NODE_MODULES=os.environ.get("NODE_MODULES", str(HERE.parent.parent / "node_modules")),
        HERALD_URL=os.environ.get("HERALD_URL", "http://127.0.0.1:5000"),  # Herald
        HERALD_API_KEY=os.environ.get("HERALD_API_KEY"),                    # Herald
        HERALD_JWT_SECRET=os.environ.get("HERALD_JWT_SECRET"),              # Herald
        HERALD_TOPICS=["board"],  # Herald: pages may follow board.* only
    )
    app.config.update(config or {})
    herald.init_app(app)  # Herald
    store = Store(app.config["BOARD_DB"])
    alerts = AssignmentAlerts(app.extensions["herald"])  # Herald: the background job
    alerts.start()
    app.extensions["board"] = store

    @herald.user_loader  # Herald: who is signed in
    def current_user():
        return session.get("user")

    @app.after_request
    def content_security_policy(response):
        herald_origin = app.config["HERALD_URL"].rstrip("/")
        socket_origin = herald_origin.replace("http", "ws", 1)
        response.headers["Content-Security-Policy"] = (
            f"default-src 'self'; script-src 'self' {herald_origin}; style-src 'self'; "
            f"connect-src 'self' {herald_origin} {socket_origin}; img-src 'self' data:; "
            "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    @app.get("/login")
    def login_form():
        return render_template("login.html", users=store.users(), password=DEMO_PASSWORD)

    @app.post("/login")
    def login():
        name = request.form.get("username", "")
        if not store.check_password(name, request.form.get("password")):
            return render_template("login.html", users=store.users(), password=DEMO_PASSWORD,
                                   error="Wrong user name or password.", username=name), 401
        session.clear()
        session["user"] = name
        return redirect(url_for("board"))

    @app.post("/logout")
    def logout():
        session.clear()
        return redirect(url_for("login_form"))

    @app.get("/")
    def board():
        if not current_user():
            return redirect(url_for("login_form"))
        return render_template("board.html", user=current_user(), users=store.users(),
                               columns=COLUMNS)

    def signed_in():
        user = current_user()
        if not user:
            abort(401)
        if request.method in ("POST", "PUT", "PATCH") and not request.is_json:
            abort(415)  # JSON only: a cross-site form cannot send it without CORS
        return user

    @app.get("/api/cards")
    def list_cards():
        signed_in()
        return jsonify(store.cards())

    @app.post("/api/cards")
    def create_card():
        user = signed_in()
        card = store.create(request.get_json(silent=True), user)
        announce("created", card, user)
        return jsonify(card), 201

    @app.route("/api/cards/<int:card_id>", methods=["PUT", "PATCH"])
    def update_card(card_id):
        user = signed_in()
        card, before = store.update(card_id, request.get_json(silent=True), user)
        if card is None:
            abort(404)
        announce("updated", card, user)
        if card["assignee"] and card["assignee"] != before["assignee"]:
            alerts.queue.put((card, user))
        return jsonify(card)

    @app.delete("/api/cards/<int:card_id>")
    def delete_card(card_id):
        user = signed_in()
        card = store.delete(card_id, user)
        if card is None:
            abort(404)
        announce("deleted", card, user)
        return "", 204

    @app.errorhandler(CardError)
    def refused(exc):
        return jsonify(error=str(exc)), 400

    @app.get("/vendor/<name>")
    def vendor(name):
        if name not in VENDOR:
            abort(404)
        return send_from_directory(app.config["NODE_MODULES"], VENDOR[name], max_age=3600)

    return app


def announce(action, card, user):
    """Herald: every browser looking at the board gets the card as it now is."""
    herald.publish(f"board.card.{action}", f"{user} {action} “{card['title']}”", data=card)
