"""How each user wants to be told, by topic prefix: in the app only, an email digest
(hourly, daily, weekly, in their time zone), an email at once for critical ones,
or muted (left out of the inbox); and quiet hours for email. For every user.

Kept as ``herald:{u:<user>}:prefs`` (JSON, under the user's hash tag) and carried out by the digest machinery:
each rule that emails becomes a digest subscription owned by the user and
marked ``managed`` (app/digests/store.py), rewritten whenever the preferences
change. The most specific rule wins: a digest for ``ops`` leaves out
``ops.noise`` when another rule says ``ops.noise`` is in-app only. A user's
own digests hold only what they may see (a private notification goes only
into its owner's digests).
"""
import orjson

from app.digests import schedule, store
from app.key_layout import user_tag
from app.stream.envelope import EnvelopeError, check_topic_prefix, topic_matches, within

MODES = {"app": None, "hourly": "hourly", "daily": "daily@08:00", "weekly": "0 8 * * 1",
         "critical": "daily@08:00", "mute": None}
MAX_RULES = 20
DEFAULTS = {"email": None, "timezone": "UTC", "quiet": None, "rules": []}


class PreferenceError(ValueError):
    """Preferences that cannot be kept; the message starts with the field (``field``)."""

    @property
    def field(self):
        return str(self).partition(":")[0]


def key(user):
    """The key of ``user``'s preferences (app.users.purge removes it)."""
    return _key(user)


def _key(user):
    return f"herald:{user_tag(user)}:prefs"


def get(client, user):
    raw = client.get(_key(user))
    return dict(DEFAULTS, **orjson.loads(raw)) if raw else dict(DEFAULTS)


def mute_rules(prefs):
    """``[(prefix, muted)]`` of ``prefs``' rules, the most specific first: a topic is
    muted when the first prefix covering it is (a "mute" rule: the inbox leaves it
    out; a more specific rule of another mode brings a part of it back)."""
    rules = [(rule["topic"], rule["mode"] == "mute") for rule in prefs["rules"]]
    if not any(muted for _topic, muted in rules):
        return []
    return sorted(rules, key=lambda rule: (rule[0] == "*", -len(rule[0])))


def validate(data, limit=None):
    """The preferences ``data`` asks for, checked; ``limit`` (a host-app token's
    ``topics`` claim, or None) bounds the topics its rules may name."""
    if not isinstance(data, dict):
        raise PreferenceError("body: must be a JSON object")
    unknown = set(data) - set(DEFAULTS)
    if unknown:
        raise PreferenceError(f"{sorted(unknown)[0]}: is not a known field")
    clean = dict(DEFAULTS, **data)
    try:
        schedule.zone(clean["timezone"])
    except schedule.ScheduleError as exc:
        raise PreferenceError(str(exc)) from None
    rules = clean["rules"]
    if not isinstance(rules, list) or len(rules) > MAX_RULES:
        raise PreferenceError(f"rules: must be a list of at most {MAX_RULES} rules")
    seen = set()
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict) or set(rule) != {"topic", "mode"}:
            raise PreferenceError(f'rules[{index}]: must be {{"topic": prefix, "mode": ...}}')
        try:
            check_topic_prefix(rule["topic"])
        except EnvelopeError as exc:
            raise PreferenceError(f"rules[{index}].{exc}") from None
        if limit is not None and not within(limit, rule["topic"]):
            raise PreferenceError(f"rules[{index}].topic: {rule['topic']!r} is outside what "
                                  f"this token allows ({', '.join(limit)})")
        if rule["mode"] not in MODES:
            raise PreferenceError(f"rules[{index}].mode: must be one of " + ", ".join(MODES))
        if rule["topic"] in seen:
            raise PreferenceError(f"rules[{index}].topic: {rule['topic']!r} has a rule already")
        seen.add(rule["topic"])
    emails = any(MODES[rule["mode"]] for rule in rules)
    if emails and not clean["email"]:
        raise PreferenceError("email: is required for rules that send email")
    # The digest store checks the email address and the quiet hours the same way.
    probe = {"email": clean["email"] or "nobody@example.com", "topics": ["*"],
             "quiet": clean["quiet"], "timezone": clean["timezone"]}
    try:
        store.validate(probe)
    except store.DigestError as exc:
        raise PreferenceError(str(exc)) from None
    return clean


def _digest_for(rule, rules, prefs):
    """The managed digest subscription a rule that emails becomes."""
    inside = [other["topic"] for other in rules
              if other["topic"] != rule["topic"] and rule["topic"] != other["topic"]
              and topic_matches(rule["topic"], other["topic"]) and other["topic"] != "*"]
    critical = rule["mode"] == "critical"
    return {"email": prefs["email"], "topics": [rule["topic"]], "exclude": inside,
            "schedule": MODES[rule["mode"]], "timezone": prefs["timezone"],
            "quiet": prefs["quiet"], "managed": True, "critical_now": critical,
            "min_severity": "critical" if critical else "info"}


def put(client, user, data, limit=None):
    """Replace ``user``'s preferences and rewrite the digests they make; returns them.
    ``limit``: see :func:`validate`."""
    prefs = validate(data, limit)
    for record in store.list_all(client, user):
        if record.get("managed"):
            store.delete(client, record["id"], user)
    for rule in prefs["rules"]:
        if MODES[rule["mode"]]:
            store.create(client, user, _digest_for(rule, prefs["rules"], prefs),
                         limit=store.MAX_PER_OWNER + MAX_RULES)
    client.set(_key(user), orjson.dumps(prefs))
    return prefs
