"""Which topics the recent history holds, and how many notifications each: what the
subscription box suggests (``GET /api/topics``, app/web/api/topics.py).

A read of the whole history per request would cost up to HISTORY_MAX entries,
so each web process keeps one :class:`TopicCounts`: a tally of the newest
``most`` entries of ``herald:stream`` (topic and owner of each, never the
envelope's text), made by a full scan in bounded pages, then kept up to the
newest entry by reading only what came since (one round trip when nothing
did). It is scanned afresh every ``refresh`` seconds, when the stream was
recreated (its epoch changed), or when too much arrived at once to catch up,
so what trimming took away leaves it again.

The tally holds every user's entries; :meth:`TopicCounts.view` answers for one
user only what they may see: public notifications, their own private ones
(above their born floor, as history.py reads them), and with a host-app token
limited to some prefixes (``allowed``), only topics inside those.

    counts = TopicCounts()
    counts.view(client, "alice", None)
    # {"topics": [{"topic": "spark.job.done", "count": 12, "newest": "17..-0"}, ...],
    #  "prefixes": [{"prefix": "spark", "count": 30, "newest": ...}, ...],
    #  "scanned": 10000, "since": "17..-0", "truncated": False}
"""
import threading
import time

from app.redis_client import raw_entries, raw_name
from app.stream.envelope import id_key, within
from app.stream.keys import BORN, EPOCH, STREAM

SCAN_MOST = 10_000   # entries a full scan reads at most: the newest ones
PAGE = 2_500         # entries per read of a full scan
CATCH_UP = 1_000     # at most this many new entries are added to a tally; more: a full scan
REFRESH = 10.0       # seconds a tally is caught up before it is scanned afresh
LISTED = 500         # topics (and prefixes) listed at most, the most frequent first


class _Tally:
    """Counts of one scan and the catch-ups after it: per public topic ``[count,
    newest id]``; per owner and topic the ids of the private ones (few, and each
    reader applies their own born floor to them)."""

    def __init__(self, epoch, made):
        self.epoch, self.made = epoch, made
        self.public, self.private = {}, {}
        self.scanned, self.oldest, self.newest = 0, None, None
        self._public_counts = None

    def add(self, entries, newest_first):
        """Count raw XRANGE/XREVRANGE ``entries`` (``[id, [field, value, ...]]``) that are
        all older (``newest_first``: a scan going back) or all newer than those counted."""
        public, private = self.public, self.private
        for entry_id, fields in entries:
            if len(fields) >= 4 and fields[0] == b"topic" and fields[2] == b"user":  # as published
                topic, owner = fields[1], fields[3]
            else:
                named = dict(zip(fields[::2], fields[1::2], strict=False))
                topic, owner = named[b"topic"], named.get(b"user", b"")
            if owner:
                private.setdefault(owner, {}).setdefault(topic, []).append(entry_id)
            elif topic in public:
                counted = public[topic]
                counted[0] += 1
                if not newest_first:
                    counted[1] = entry_id
            else:
                public[topic] = [1, entry_id]
        if entries:
            first, last = entries[0][0], entries[-1][0]
            if newest_first:
                self.newest = self.newest or first
                self.oldest = last
            else:
                self.oldest = self.oldest or first
                self.newest = last
            self.scanned += len(entries)
            self._public_counts = None

    def counts(self, user, floor):
        """``{topic: (count, newest id key)}`` of what ``user`` (with born ``floor``, an id
        key or None) may see: every public topic and their own private ones."""
        if self._public_counts is None:
            self._public_counts = {t.decode(): (n, id_key(newest))
                                   for t, (n, newest) in self.public.items()}
        counts = self._public_counts
        mine = self.private.get(user.encode())
        if mine:
            counts = dict(counts)
            for topic, ids in mine.items():
                keys = [k for k in map(id_key, ids) if floor is None or k > floor]
                if keys:
                    name = topic.decode()
                    count, newest = counts.get(name, (0, (0, 0)))
                    counts[name] = (count + len(keys), max(newest, *keys))
        return counts


def _summary(counts, allowed):
    """The answer for ``counts`` (of :meth:`_Tally.counts`): topics, and the prefixes
    above them with every notification a subscription to the prefix matches (the
    topic of that name too), the most frequent first; only those inside ``allowed``
    when given."""
    if allowed is not None:
        counts = {t: c for t, c in counts.items() if within(allowed, t)}
    prefixes = {}
    for topic, (count, newest) in counts.items():
        end = topic.find(".")
        while end != -1:
            prefix = topic[:end]
            total, latest = prefixes.get(prefix, (0, (0, 0)))
            prefixes[prefix] = (total + count, max(latest, newest))
            end = topic.find(".", end + 1)
    for prefix, (total, latest) in prefixes.items():  # what subscribing to it matches
        if prefix in counts:
            count, newest = counts[prefix]
            prefixes[prefix] = (total + count, max(latest, newest))
    if allowed is not None:
        prefixes = {p: c for p, c in prefixes.items() if within(allowed, p)}

    def listed(found, name):
        ranked = sorted(found.items(), key=lambda item: (-item[1][0], item[0]))[:LISTED]
        return [{name: key, "count": count, "newest": f"{newest[0]}-{newest[1]}"}
                for key, (count, newest) in ranked]
    return {"topics": listed(counts, "topic"), "prefixes": listed(prefixes, "prefix"),
            "truncated": len(counts) > LISTED or len(prefixes) > LISTED}


class TopicCounts:
    """One web process's tally of the recent history's topics (see the module's doc).

    ``most``: entries a full scan reads; ``refresh``: seconds between full scans;
    ``clock``: monotonic seconds (tests pass their own).
    """

    def __init__(self, most=SCAN_MOST, refresh=REFRESH, clock=time.monotonic):
        self.most, self.refresh, self.clock = most, refresh, clock
        self._tally = None
        # One request brings the tally up to date at a time; the others then use it
        # (a greenlet's lock under gevent).
        self._lock = threading.Lock()

    def view(self, client, user, allowed):
        """What ``user`` may see of the recent history's topics (``allowed``: the prefixes
        a limited token may read, else None): ``{"topics", "prefixes", "scanned",
        "since", "truncated"}``."""
        with self._lock:
            floor, tally = self._current(client, user)
            answer = _summary(tally.counts(user, floor), allowed)
            oldest = tally.oldest
        answer.update(scanned=tally.scanned, since=oldest.decode() if oldest else None)
        return answer

    def _current(self, client, user):
        """(``user``'s born floor, the tally brought up to the newest entry)."""
        tally = self._tally
        pipe = client.pipeline(transaction=False)
        pipe.get(EPOCH)
        pipe.get(BORN + user)
        caught_up = tally is not None and self.clock() - tally.made < self.refresh \
            and tally.scanned < 2 * self.most
        if caught_up:
            pipe.execute_command(raw_name(client, "XRANGE"), STREAM, b"(" + (tally.newest or b"0-0"),
                                 "+", "COUNT", CATCH_UP)
        replies = pipe.execute()
        if caught_up:
            replies[2] = raw_entries(client, replies[2])
        epoch, floor = replies[0], id_key(replies[1]) if replies[1] else None
        if caught_up and epoch == tally.epoch and len(replies[2]) < CATCH_UP:
            tally.add(replies[2], newest_first=False)
            return floor, tally
        self._tally = self._scan(client, epoch)
        return floor, self._tally

    def _scan(self, client, epoch):
        """A new tally of the newest ``most`` entries, read newest first in pages."""
        tally = _Tally(epoch, self.clock())
        bound = b"+"
        while tally.scanned < self.most:
            count = min(PAGE, self.most - tally.scanned)
            entries = raw_entries(client, client.execute_command(
                raw_name(client, "XREVRANGE"), STREAM, bound, "-", "COUNT", count))
            tally.add(entries, newest_first=True)
            if len(entries) < count:
                break
            bound = b"(" + entries[-1][0]
        return tally
