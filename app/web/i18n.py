"""The pages' language: English or German, by the reader's choice or their browser's.

Flask-Babel translates the templates and the messages the server shows people
(``gettext``); the catalogues are translations/<locale>/LC_MESSAGES/messages.po,
compiled beside them to messages.mo (both committed: a fresh clone needs no
compile step; ``pybabel`` commands are in the README, "Languages"). The locale
of a request is the ``herald_lang`` cookie that the language switch sets
(``/language``), else the best match of the browser's Accept-Language among
LOCALES, else English. JSON API errors stay English: they are for programs.

The pages' scripts build much of their text themselves; they get the messages
that come from static/js (the .po file's own record of where each was found) as
a JSON island, ``js_messages()``, read by static/js/i18n.js (``herald.t``).
"""
from functools import lru_cache

from babel.messages.pofile import read_po
from flask import Blueprint, has_request_context, redirect, request
from flask_babel import Babel, get_locale

from app.settings import ROOT
from app.web.safe_redirect import safe_target

LOCALES = ("en", "de")
DEFAULT = "en"
COOKIE = "herald_lang"
TRANSLATIONS = ROOT / "translations"
YEAR = 365 * 24 * 3600

bp = Blueprint("i18n", __name__)


def select_locale():
    """The reader's choice (the cookie), else their browser's best, else English (and
    English outside a request: a worker rendering with the app has no reader to ask)."""
    if not has_request_context():
        return DEFAULT
    chosen = request.cookies.get(COOKIE)
    if chosen in LOCALES:
        return chosen
    return request.accept_languages.best_match(LOCALES) or DEFAULT


def locale():
    """This request's language tag, e.g. "de", for ``<html lang>`` and the scripts."""
    return str(get_locale() or DEFAULT)


@lru_cache(maxsize=len(LOCALES))
def _script_messages(tag):
    """``{msgid: text or [singular, plural]}`` of the messages found in static/js."""
    path = TRANSLATIONS / tag / "LC_MESSAGES" / "messages.po"
    if tag == DEFAULT or not path.exists():
        return {}
    with path.open("rb") as po:
        catalog = read_po(po, locale=tag)
    found = {}
    for message in catalog:
        if not message.id or not message.string or message.fuzzy:
            continue
        if not any(file.endswith(".js") for file, _line in message.locations):
            continue
        if isinstance(message.id, (list, tuple)):
            found[message.id[0]] = list(message.string)
        else:
            found[message.id] = message.string
    return found


def js_messages():
    """What the page's scripts need to speak its language: the locale and its messages."""
    tag = locale()
    return {"locale": tag, "messages": _script_messages(tag)}


@bp.route("/language")
def choose():
    """The language switch: remember ``lang`` in a cookie, back to the page it was on."""
    answer = redirect(safe_target(request.args.get("next")))  # this site only
    chosen = request.args.get("lang")
    if chosen in LOCALES:
        answer.set_cookie(COOKIE, chosen, max_age=YEAR, samesite="Lax", httponly=True,
                          secure=request.is_secure)
    return answer


def init_app(app):
    """Flask-Babel with Herald's locale selector, the switch, and the templates' helpers."""
    Babel(app, locale_selector=select_locale,
          default_translation_directories=str(TRANSLATIONS))
    app.register_blueprint(bp)
    app.jinja_env.globals.update(page_locale=locale, js_messages=js_messages, LOCALES=LOCALES)
