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

A sharded history (``STREAM_SHARDS=N``, app/stream/shards.py) is read shard by
shard (one command reaches one shard's slot on a Redis Cluster): a full scan reads
each shard's stream newest first, a page at a time, and counts the newest ``most``
entries of them all, by time (the shards' pages merged); a catch-up reads each
shard on from the newest entry it had; the tally is scanned afresh when any
shard's epoch changed. Each ``newest`` and ``since`` is a notification id
(``<ms>-<seq>-<k>`` in shard k).

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
from app.stream.keys import BORN
from app.stream.shards import configured as configured_shards

SCAN_MOST = 10_000   # entries a full scan reads at most: the newest ones
PAGE = 2_500         # entries per read of a full scan
CATCH_UP = 1_000     # at most this many new entries are added to a tally; more: a full scan
REFRESH = 10.0       # seconds a tally is caught up before it is scanned afresh
LISTED = 500         # topics (and prefixes) listed at most, the most frequent first


NONE = ((0, 0), "")  # the newest of nothing: below every (id key, id)


class _Tally:
    """Counts of one scan and the catch-ups after it: per public topic ``[count,
    newest id]``; per owner and topic the ids of the private ones (few, and each
    reader applies their own born floor to them). Ids are notification ids (bytes);
    ``newest`` is, per shard, the stream id a catch-up reads on after."""

    def __init__(self, epochs, made):
        self.epochs, self.made = epochs, made
        self.public, self.private = {}, {}
        self.scanned, self.oldest, self.newest = 0, None, {}
        self._public_counts = None

    def add(self, entries, shard, newest_first):
        """Count raw XRANGE/XREVRANGE ``entries`` (``[id, [field, value, ...]]``) of
        ``shard`` that are all older (``newest_first``: a scan going back, the shards'
        entries merged newest first) or all newer than those counted of that shard."""
        public, private = self.public, self.private
        suffix, one = shard.suffix.encode(), shard.count == 1
        for entry_id, fields in entries:
            if suffix:
                entry_id += suffix
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
                if not newest_first and (one or id_key(entry_id) >= id_key(counted[1])):
                    counted[1] = entry_id  # (with shards, another shard's may be newer)
            else:
                public[topic] = [1, entry_id]
        if entries:
            first, last = entries[0][0], entries[-1][0]
            if newest_first:
                self.oldest = last + suffix
            else:
                self.oldest = self.oldest or first + suffix
                self.newest[shard.index] = last
            self.scanned += len(entries)
            self._public_counts = None

    def counts(self, user, floor):
        """``{topic: (count, (newest id key, newest id))}`` of what ``user`` (with born
        ``floor``, an id key or None) may see: every public topic and their own private
        ones."""
        if self._public_counts is None:
            self._public_counts = {t.decode(): (n, (id_key(newest), newest.decode()))
                                   for t, (n, newest) in self.public.items()}
        counts = self._public_counts
        mine = self.private.get(user.encode())
        if mine:
            counts = dict(counts)
            for topic, ids in mine.items():
                keys = [(key, i) for key, i in zip(map(id_key, ids), ids, strict=True)
                        if floor is None or key > floor]
                if keys:
                    name = topic.decode()
                    count, newest = counts.get(name, (0, NONE))
                    key, entry_id = max(keys)
                    counts[name] = (count + len(keys), max(newest, (key, entry_id.decode())))
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
            total, latest = prefixes.get(prefix, (0, NONE))
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
        return [{name: key, "count": count, "newest": newest[1]}
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
        shards = configured_shards()
        pipe = client.pipeline(transaction=False)  # one command per shard: a slot each
        for shard in shards:
            pipe.get(shard.epoch)
        pipe.get(BORN + user)
        caught_up = tally is not None and self.clock() - tally.made < self.refresh \
            and tally.scanned < 2 * self.most and len(tally.epochs) == len(shards)
        if caught_up:
            for shard in shards:
                pipe.execute_command(raw_name(client, "XRANGE"), shard.stream,
                                     b"(" + tally.newest.get(shard.index, b"0-0"), "+",
                                     "COUNT", CATCH_UP)
        replies = pipe.execute()
        epochs, born = tuple(replies[:len(shards)]), replies[len(shards)]
        floor = id_key(born) if born else None
        if caught_up:
            news = [raw_entries(client, reply) for reply in replies[len(shards) + 1:]]
            if epochs == tally.epochs and all(len(new) < CATCH_UP for new in news):
                for shard, new in zip(shards, news, strict=True):
                    tally.add(new, shard, newest_first=False)
                return floor, tally
        self._tally = self._scan(client, shards, epochs)
        return floor, self._tally

    def _scan(self, client, shards, epochs):
        """A new tally of the newest ``most`` entries (of every shard, by time), read
        newest first in pages."""
        tally = _Tally(epochs, self.clock())
        reads = [_Back(client, shard, tally) for shard in shards]
        while tally.scanned < self.most:
            left = self.most - tally.scanned
            heads = [(read.head(min(PAGE, left)), read) for read in reads]
            heads = sorted(((key, read.shard.index, read) for key, read in heads
                            if key is not None), reverse=True)  # by time, then shard
            if not heads:
                break
            read = heads[0][2]
            tally.add(read.take(left, heads[1][:2] if len(heads) > 1 else None), read.shard,
                      newest_first=True)
        return tally


class _Back:
    """One shard's stream read newest first, a page at a time, for a scan's merge."""

    def __init__(self, client, shard, tally):
        self.client, self.shard, self.tally = client, shard, tally
        self.bound, self.page, self.at, self.ended = b"+", [], 0, False

    def head(self, count):
        """The id key of the newest entry not taken yet (reading a page of ``count``
        when the last is used up), or None at the stream's start."""
        if self.at == len(self.page):
            if self.ended:
                return None
            self.page, self.at = raw_entries(self.client, self.client.execute_command(
                raw_name(self.client, "XREVRANGE"), self.shard.stream, self.bound, "-",
                "COUNT", count)), 0
            self.ended = len(self.page) < count
            if not self.page:
                return None
            self.tally.newest.setdefault(self.shard.index, self.page[0][0])  # catch-ups: on after
            self.bound = b"(" + self.page[-1][0]
        return id_key(self.page[self.at][0])

    def take(self, most, above):
        """Up to ``most`` of the entries in hand, newest first: the first, and those after
        it newer than ``above`` (another shard's newest not taken, ``(id key, shard
        index)``; None when there is none)."""
        end = min(len(self.page), self.at + most)
        if above is not None:
            stop, index = self.at + 1, self.shard.index
            while stop < end and (id_key(self.page[stop][0]), index) > above:
                stop += 1
            end = stop
        taken, self.at = self.page[self.at:end], end
        return taken
