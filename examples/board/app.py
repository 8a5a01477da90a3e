"""The example host app: a shared board of cards, with its own users, kept live by Herald.

Everything Herald-specific is marked ``# Herald``: the extension's settings
and ``init_app``, who is signed in (``user_loader``), the outbox table, the
cursor the board page renders with its cards, and the private alert to a
card's new assignee (``herald.publish`` in the change's own transaction).
The views never publish a card's change: they commit it, and
``herald.track`` (live.py) has that same commit write the event to Herald's
outbox, which the relay ships (``HERALD_OUTBOX_RELAY``: in this process,
unless ``flask --app examples.board.app:create_app herald relay`` runs it).
The page renders ``{{ herald_scripts() }}``, its cards and the cursor, and
its script connects and syncs from that cursor (static/board.js).
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
from sqlalchemy.orm.exc import StaleDataError

from . import store
from .alerts import assignment_alert
from .database import set_up
from .live import herald
from .models import COLUMNS, db
from .store import DEMO_PASSWORD, CardError

HERE = Path(__file__).resolve().parent
VENDOR = {  # the host app brings its own libraries (here, from the repository's node_modules)
    "jquery.js": "jquery/dist/jquery.min.js",
    "underscore.js": "underscore/underscore-umd-min.js",
    "backbone.js": "backbone/backbone-min.js",
}


def create_app(config=None):
    app = Flask(__name__)
    app.config.update(
        SECRET_KEY=os.environ.get("EXAMPLE_SECRET_KEY") or secrets.token_hex(32),
        SESSION_COOKIE_NAME="board_session",
        SESSION_COOKIE_SAMESITE="Lax",
        BOARD_DB=os.environ.get("BOARD_DB", "board.db"),
        BOARD_DATABASE_URL=os.environ.get("BOARD_DATABASE_URL"),  # e.g. postgresql+psycopg://...
        NODE_MODULES=os.environ.get("NODE_MODULES", str(HERE.parent.parent / "node_modules")),
        HERALD_URL=os.environ.get("HERALD_URL", "http://127.0.0.1:5000"),  # Herald
        HERALD_API_KEY=os.environ.get("HERALD_API_KEY"),                    # Herald
        HERALD_JWT_SECRET=os.environ.get("HERALD_JWT_SECRET"),              # Herald
        HERALD_TOPICS=["board"],  # Herald: pages may follow board.* only
        # Herald: the outbox relay runs in this process (0: `flask herald relay` runs it)
        HERALD_OUTBOX_RELAY=os.environ.get("HERALD_OUTBOX_RELAY", "1") != "0",
    )
    app.config.update(config or {})
    set_up(app)
    herald.init_app(app)  # Herald
    with app.app_context():
        herald.outbox.create_table(db.engine)  # Herald: the outbox, beside the cards
        store.add_demo_users()

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
        cursor = herald.cursor()  # Herald: before the cards, so that it is not newer than them
        return render_template("board.html", user=current_user(), users=store.users(),
                               columns=COLUMNS, cards=store.cards(), cursor=cursor)

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
        db.session.flush()  # the id; the outbox row is written by this flush too
        answer = card.to_json()
        db.session.commit()  # Herald: the card and its board.card.created event, at once
        return jsonify(answer), 201

    @app.route("/api/cards/<int:card_id>", methods=["PUT", "PATCH"])
    def update_card(card_id):
        user = signed_in()
        fields = request.get_json(silent=True)
        card = store.find_for_change(card_id)
        if card is None:
            abort(404)
        assignee = card.assignee
        if store.update(card, fields, user):
            db.session.flush()
        answer = card.to_json()
        if answer["assignee"] and answer["assignee"] != assignee:
            assignment_alert(herald, answer, user)  # Herald: the alert, in this transaction
        db.session.commit()  # Herald: board.card.updated goes with it, when it changed
        return jsonify(answer)

    @app.delete("/api/cards/<int:card_id>")
    def delete_card(card_id):
        user = signed_in()
        card = store.find_for_change(card_id)
        if card is None:
            abort(404)
        store.delete(card, user)
        db.session.commit()  # Herald: board.card.deleted, naming who deleted it
        return "", 204

    @app.errorhandler(CardError)
    def refused(exc):
        db.session.rollback()
        return jsonify(error=str(exc)), 400

    @app.errorhandler(StaleDataError)
    def changed_meanwhile(_exc):  # a row changed under a copy read without its lock
        db.session.rollback()
        return jsonify(error="the card changed meanwhile: try again"), 409

    @app.get("/vendor/<name>")
    def vendor(name):
        if name not in VENDOR:
            abort(404)
        return send_from_directory(app.config["NODE_MODULES"], VENDOR[name], max_age=3600)

    return app

