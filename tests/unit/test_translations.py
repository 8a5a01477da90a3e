"""The German catalogue (translations/de) is whole and the compiled one matches it:
every message the templates, the server and the pages' scripts mark has a German
text with the same placeholders, and messages.mo says what messages.po says."""
import os
import re

import pytest
from babel.messages.frontend import CommandLineInterface
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from tests.support import ROOT

TRANSLATIONS = ROOT / "translations"
PO = TRANSLATIONS / "de" / "LC_MESSAGES" / "messages.po"
MO = TRANSLATIONS / "de" / "LC_MESSAGES" / "messages.mo"
PLACEHOLDER = re.compile(r"\{\w+\}|%\(\w+\)s")
# A literal first argument of herald.t / tn / tHtml in static/js.
SCRIPT_CALL = re.compile(r"\b(?:t|tn|tHtml)\('((?:[^'\\]|\\.)*)'")


def catalogue(path):
    with path.open("rb") as po:
        return read_po(po, locale="de")


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    """What pybabel finds marked in the sources today (README, "Languages")."""
    pot = tmp_path_factory.mktemp("pot") / "messages.pot"
    here = os.getcwd()
    os.chdir(ROOT)  # babel.cfg's paths are the repository's
    try:
        CommandLineInterface().run(["pybabel", "-q", "extract", "-F", str(TRANSLATIONS / "babel.cfg"),
                                    "-k", "_l", "-k", "t", "-k", "tn:1,2", "-k", "tHtml",
                                    "-o", str(pot), "."])
    finally:
        os.chdir(here)
    return catalogue(pot)


def key(message):
    return message.id[0] if isinstance(message.id, (list, tuple)) else message.id


def forms(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def test_every_marked_message_has_german(extracted):
    german = catalogue(PO)
    untranslated = []
    for message in extracted:
        found = german.get(message.id) if message.id else None
        if message.id and (found is None or found.fuzzy or not all(forms(found.string))):
            untranslated.append(key(message))
    assert untranslated == []


def test_every_script_message_is_extracted(extracted):
    """A herald.t(...) nested in another's arguments is not seen by pybabel: hoist it."""
    known = {key(m) for m in extracted}
    found = {(path.name, text.replace("\\'", "'")) for path in (ROOT / "static" / "js").rglob("*.js")
             for text in SCRIPT_CALL.findall(path.read_text())}
    missed = sorted((name, text) for name, text in found if text not in known and name != "i18n.js")
    assert missed == []


def test_german_keeps_the_placeholders():
    wrong = [(key(m), s) for m in catalogue(PO) if m.id for s in forms(m.string)
             if sorted(set(PLACEHOLDER.findall(s))) != sorted(set(PLACEHOLDER.findall(key(m))))]
    assert wrong == []


def test_the_compiled_catalogue_matches_the_po():
    with MO.open("rb") as mo:
        compiled = {key(m): forms(m.string) for m in read_mo(mo) if m.id}
    written = {key(m): forms(m.string) for m in catalogue(PO) if m.id and not m.fuzzy}
    assert compiled == written, "run: .venv/bin/pybabel compile -d translations"
