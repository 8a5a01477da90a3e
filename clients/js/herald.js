/*
 * Herald's browser client: live notifications for any page, on any origin.
 *
 *     var herald = Herald.connect({url: 'https://herald.example.com', getToken: fetchToken});
 *     herald.on('notification', function (n) { console.log(n.title); });
 *     herald.subscribe(['ops']);
 *     Herald.sync(records, 'board.record', {fetch: true});  // a Backbone collection, kept live
 *
 * Without a framework. Every notification is also a DOM event on
 * `document.body`, `herald:<topic>` with the envelope as `detail` (it bubbles:
 * htmx's `hx-trigger="herald:board.card.updated from:body"` and
 * `document.addEventListener('herald:board.card.updated', ...)` both hear it;
 * `domEvents: false` turns it off). `Herald.sync` also keeps a plain store
 * live: a `Map`, a `Herald.Store` (a Map-like store whose `add`, `change`,
 * `remove` and `update` events a page renders from), or anything with
 * `get(id)`, `set(id, record)` and `delete(id)`, records being plain objects:
 *
 *     var cards = new Herald.Store(page.cards);
 *     cards.on('update', render);
 *     Herald.sync(cards, 'board.card', {since: page.heraldCursor});
 *
 * A server-rendered page can simply be refreshed instead: with
 * `<meta name="herald-refresh" content="board">` in it (the Flask extension's
 * `{{ herald_refresh("board") }}`), `Herald.connect(Herald.pageOptions())`
 * subscribes to `board.refresh` and, when the host app says the stream
 * changed, fetches the page again and morphs the body into the new one with
 * Idiomorph (loaded from Herald at /client/idiomorph.js when first needed),
 * keeping scroll, focus and what is being typed; `herald:refreshed` follows
 * on `document`. An element with an id and `data-herald-permanent` is left as
 * it is (as Turbo's `data-turbo-permanent`).
 *
 * A page that renders its records into the HTML can render with them the
 * Herald cursor they are as of (the host app's outbox knows it), and then
 * `Herald.sync(records, 'board.record', {since: cursor})`: once subscribed,
 * the client reads what was published under the prefix after that cursor over
 * REST, so a change made between the render and the subscription is not lost.
 *
 * One file, no build step, served by Herald at /client/herald.js with
 * socket.io-client beside it at /client/socket.io.js (a page may serve this
 * file from its own origin: when socket.io-client is not on the page, because
 * Herald was down as the page loaded, the client loads it from Herald itself,
 * retrying as it would reconnect, and then goes live). When Backbone is on
 * the page the client's dispatcher is a `Backbone.Events` (views can
 * `listenTo` it); otherwise a minimal emitter with `on`, `once`, `off` and
 * `trigger`.
 *
 * Delivery. Every notification is triggered once, in id order (with a
 * sharded history, within each shard), as `notification` and
 * `notification:<topic>`. The client keeps a cursor of where it is in the
 * history and reconnects with it as `last_id`, so the server replays exactly
 * what was missed; anything at or below the cursor is a duplicate and is
 * dropped. The cursor is opaque: a string the server gives (`replayed`,
 * REST's `last_id`) and takes back. With one history shard it is the newest
 * notification id seen ("<ms>-<seq>"); with a sharded history
 * (STREAM_SHARDS=N) it is one position per shard, "<id0>_<id1>_...", and a
 * notification (id "<ms>-<seq>-<k>" in shard k > 0) moves only its shard's
 * position. After the replay the server says how it went (`replayed`); when
 * it could not recover everything (history no longer reaches back that far,
 * the stream was recreated since, or the cursor was of another form: a single
 * id, another number of shards) the client starts its cursor again, passes
 * `reset` on and, with the `snapshot` or `load` option, reloads over REST.
 *
 * Events: `notification`, `notification:<topic>`, `snapshot` (a list, oldest
 * first), `connection` ('connecting', 'connected', 'reconnecting', 'offline'),
 * `connected`, `retrying` ({at, delay, reason}: when the next reconnect is
 * tried, and the server's refusal when it refused, e.g. "unavailable: Redis
 * is unreachable, retry shortly"),
 * `status` ({redis: 'up'|'down', since}: whether the server reaches Redis),
 * `replayed` ({recovered, count, last_id}), `reset`, `read`
 * (read state, whole or a change), `state` (archived, snoozed, woke: a
 * change), `subscriptions` (the user's full list),
 * `subscriptions:error` (a message), `action:error` (a change that failed:
 * a message for people, then {message, status, retryable, action, ids, error}),
 * `sync:error` (Herald.sync's catch-up from `since` failed for good, without
 * {fetch: true} to fall back on, or a plain store's fetch failed: the Error,
 * then {prefix, collection, store}), `refreshed` and `refresh:error` (the
 * page's refresh: done, or failed, the Error then {url, status, retrying})
 * and `error` (an Error: refused for good).
 *
 * Failures say what they mean. A change (archive, snooze, markRead, send)
 * that could not reach Herald, or that Herald could not store (503: Redis
 * away), rejects with an Error whose message says so plainly ("Herald is
 * unreachable: your change was not saved."), with `status` (0 when Herald
 * did not answer at all) and `retryable` (trying again later may work), and
 * is also triggered as `action:error`, so that a page can show it beside
 * what it changed. Reads (`get`) reject the same way, without the event.
 *
 * Reconnecting. A lost connection, one that could not be made, and one the
 * server refused as `unavailable` (Redis away, or the server busy with a storm
 * of reconnects: then it says `retry_after`) are tried again after a random
 * delay from a window that doubles with each failed attempt ("full jitter"),
 * never sooner than `retry_after`: when a web process restarts, its thousands
 * of clients come back spread out rather than all at once.
 */
(function (root) {
  'use strict';

  var NAMESPACE = '/notifications';
  var ACK_TIMEOUT = 10000;  // ms to wait for the server to acknowledge a request
  var UNAVAILABLE_CAP = 30000;  // ms: the widest retry window after an "unavailable" refusal
  var RETRY_AFTER_MAX = 300;    // s: the most of a server's retry_after hint that is heeded
  var SYNC_ACTIONS = {created: true, updated: true, deleted: true};
  var UNREACHABLE = 'Herald is unreachable';
  var TOPIC = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;  // a topic, as the envelope's rule has it

  // ---- Events ----------------------------------------------------------------

  // The dispatcher when Backbone is not on the page: on, once, off, trigger.
  function Emitter() {
    this._events = {};
  }

  Emitter.prototype.on = function (name, callback, context) {
    (this._events[name] = this._events[name] || []).push({callback: callback, context: context});
    return this;
  };

  Emitter.prototype.once = function (name, callback, context) {
    var self = this;
    var wrapper = function () {
      self.off(name, wrapper);
      return callback.apply(context || self, arguments);
    };
    return this.on(name, wrapper, context);
  };

  Emitter.prototype.off = function (name, callback, context) {
    var names = name ? [name] : Object.keys(this._events);
    for (var i = 0; i < names.length; i++) {
      var kept = (this._events[names[i]] || []).filter(function (handler) {
        return (callback && handler.callback !== callback) || (context && handler.context !== context);
      });
      if (kept.length) this._events[names[i]] = kept; else delete this._events[names[i]];
    }
    return this;
  };

  Emitter.prototype.trigger = function (name) {
    var args = Array.prototype.slice.call(arguments, 1);
    var handlers = (this._events[name] || []).slice();
    for (var i = 0; i < handlers.length; i++) {
      handlers[i].callback.apply(handlers[i].context || this, args);
    }
    return this;
  };

  function makeDispatcher() {
    var Backbone = root.Backbone;
    if (Backbone && Backbone.Events) {
      var events = {};
      for (var key in Backbone.Events) events[key] = Backbone.Events[key];
      return events;
    }
    return new Emitter();
  }

  // ---- The page: DOM events and scripts -------------------------------------

  // An error in a page's listener, told to the browser's console (and
  // window.onerror, where reportError exists) without stopping what we do.
  function report(error) {
    try {
      if (typeof root.reportError === 'function') root.reportError(error);
      else if (root.console) root.console.error(error);
    } catch (e) { /* nowhere to tell it */ }
  }

  // Dispatch the DOM event `name` with `detail` on `target`; it bubbles, so
  // that `document` hears what `document.body` does. A listener that throws
  // is reported and is no hindrance (a browser's dispatchEvent does not
  // throw, but older ones and stand-ins may).
  function domEvent(target, name, detail) {
    if (!target || typeof target.dispatchEvent !== 'function') return;
    try {
      var event;
      if (typeof root.CustomEvent === 'function') {
        event = new root.CustomEvent(name, {detail: detail, bubbles: true});
      } else {
        event = root.document.createEvent('CustomEvent');
        event.initCustomEvent(name, true, false, detail);
      }
      target.dispatchEvent(event);
    } catch (error) {
      report(error);
    }
  }

  // Where a notification's DOM event goes: the body, else the document; none
  // where there is no document (Node, a worker).
  function eventTarget() {
    var document = root.document;
    return document ? document.body || document : null;
  }

  var scripts = {};  // url -> the promise of its load, while it loads and once it has

  // Load the classic script at `url` (a <script> tag in the head), once, for
  // the global `name` it defines: a promise of that global. When it cannot be
  // loaded, or does not define `name`, the promise rejects and the tag is
  // removed, so that a later call tries again.
  function loadScript(url, name) {
    if (root[name]) return Promise.resolve(root[name]);
    if (scripts[url]) return scripts[url];
    var promise = scripts[url] = new Promise(function (resolve, reject) {
      var document = root.document;
      if (!document || typeof document.createElement !== 'function') {
        throw new Error('Herald: no document to load ' + url + ' into');
      }
      var script = document.createElement('script');
      function fail(message) {
        if (script.parentNode) script.parentNode.removeChild(script);
        reject(new Error(message));
      }
      script.onload = function () {
        if (root[name]) resolve(root[name]);
        else fail(url + ' did not define ' + name);
      };
      script.onerror = function () { fail('could not load ' + url); };
      script.async = true;
      script.src = url;
      (document.head || document.documentElement || document.body).appendChild(script);
    });
    promise.catch(function () {
      if (scripts[url] === promise) delete scripts[url];
    });
    return promise;
  }

  // The contents of the page's <meta name="NAME" content="..."> tags, in order,
  // each once, blank ones left out.
  function metaContents(name) {
    var document = root.document, found = [];
    if (!document || typeof document.querySelectorAll !== 'function') return found;
    var tags = document.querySelectorAll('meta[name="' + name + '"]');
    for (var i = 0; i < tags.length; i++) {
      var content = String(tags[i].getAttribute('content') || '').trim();
      if (content && found.indexOf(content) < 0) found.push(content);
    }
    return found;
  }

  // ---- Ids and the cursor ----------------------------------------------------

  // Compare two notification ids: -1, 0 or 1. An id is "<ms>-<seq>", and with a
  // sharded history "<ms>-<seq>-<k>" in shard k > 0 (no leading zeros); ids sort
  // by (ms, seq, shard): "5-1" < "5-1-2". Compared as digit strings, so ids past
  // 2^53 still compare exactly. (Ids, not cursors: see Cursor for those.)
  function compareIds(a, b) {
    var x = String(a).split('-'), y = String(b).split('-');
    for (var i = 0; i < 3; i++) {
      var p = x[i] || '0', q = y[i] || '0';
      if (p.length !== q.length) return p.length < q.length ? -1 : 1;
      if (p !== q) return p < q ? -1 : 1;
    }
    return 0;
  }

  var SHARDS = '_';  // joins a sharded cursor's positions

  // Where the client is in the history, passed back as `last_id`; opaque to
  // pages. With one shard it is the newest notification id seen ("<ms>-<seq>");
  // with a sharded history, one position per shard, "<id0>_<id1>_..." (each a
  // plain "<ms>-<seq>", "0-0" for the start), as the server gives it in
  // `replayed` and REST's `last_id`; a notification of shard k moves position k
  // only. It may also hold a single id where a page gave one (`lastId`): the
  // server then answers `recovered: false` with a full cursor. Kept in
  // localStorage under `key`, when given.
  function Cursor(key, start) {
    this.key = key;
    this.value = null;
    if (key) this.advance(this.stored());  // the remembered cursor first: `start` moves it forward only
    this.advance(start);
  }

  Cursor.prototype.stored = function () {
    try { return root.localStorage.getItem(this.key); } catch (e) { return null; }
  };

  // What `x` (a notification id, or a whole cursor) moves the cursor to: a new
  // value, `true` when it is news that moves nothing, or null when it is not news.
  Cursor.prototype._next = function (x) {
    var value = this.value, sharded = value && value.indexOf(SHARDS) >= 0;
    if (x.indexOf(SHARDS) >= 0) {
      var theirs = x.split(SHARDS), ours = sharded ? value.split(SHARDS) : [];
      if (ours.length !== theirs.length) return x;  // none, a single id, or another number of shards
      var moved = false;
      for (var i = 0; i < ours.length; i++) {
        if (compareIds(theirs[i], ours[i]) > 0) {
          ours[i] = theirs[i];
          moved = true;
        }
      }
      return moved ? ours.join(SHARDS) : null;
    }
    if (!sharded) return !value || compareIds(x, value) > 0 ? x : null;
    // A notification id, "<ms>-<seq>[-<k>]": its shard's position only.
    var parts = x.split('-'), positions = value.split(SHARDS), shard = Number(parts[2] || 0);
    if (!(shard < positions.length)) return true;  // a shard we know no position of: news all the same
    var position = parts[0] + '-' + (parts[1] || '0');
    if (compareIds(position, positions[shard]) <= 0) return null;
    positions[shard] = position;
    return positions.join(SHARDS);
  };

  // Move forward to `x` (a notification id, or a cursor from the server); never
  // back. True when it moved (or `x` is news all the same): false means seen already.
  Cursor.prototype.advance = function (x) {
    if (!x) return false;
    var next = this._next(String(x));
    if (next === null) return false;
    if (next === true) return true;
    this.value = next;
    if (this.key) {
      try { root.localStorage.setItem(this.key, next); } catch (e) { /* private mode, full */ }
    }
    return true;
  };

  // Start again from `x` (a recreated stream's ids may be older than ours).
  Cursor.prototype.restart = function (x) {
    this.value = null;
    if (this.key) {
      try { root.localStorage.removeItem(this.key); } catch (e) { /* private mode */ }
    }
    this.advance(x);
  };

  // True when cursor `next` is past cursor `after` (in any shard): a read from
  // `after` that ended at `next` got somewhere.
  function movedOn(after, next) {
    return new Cursor(null, after).advance(next);
  }

  // True when one of the subscription prefixes `topics` covers `prefix`.
  function covers(topics, prefix) {
    return (topics || []).some(function (topic) {
      return topic === '*' || topic === prefix || prefix.indexOf(topic + '.') === 0;
    });
  }

  // ---- Tokens ------------------------------------------------------------------

  // The claims of a JWT (none for Herald's own tokens, which are not JWTs).
  function jwtClaims(token) {
    try {
      var part = String(token).split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      var claims = JSON.parse(root.atob(part + '==='.slice((part.length + 3) % 4)));
      return claims && typeof claims === 'object' ? claims : {};
    } catch (e) {
      return {};
    }
  }

  // Keeps a token fresh enough to use: `getToken()` (a value or a promise of
  // one) is asked again once the token is half-way to its expiry (a JWT's
  // `exp`, else `tokenTtl` seconds), or after the server refused it.
  function TokenSource(options) {
    this.fetch = options.getToken || null;
    this.ttl = options.tokenTtl || null;
    this.pending = null;
    this.accept(options.token || null);
  }

  TokenSource.prototype.accept = function (token) {
    var claims = jwtClaims(token), now = Date.now();
    this.token = token;
    this.claims = claims;
    if (typeof claims.exp === 'number') {
      var issued = typeof claims.iat === 'number' ? claims.iat * 1000 : now;
      this.refreshAt = issued + (claims.exp * 1000 - issued) / 2;
    } else {
      this.refreshAt = this.ttl ? now + this.ttl * 500 : Infinity;
    }
  };

  TokenSource.prototype.get = function () {
    var self = this;
    if (self.token && Date.now() < self.refreshAt) return Promise.resolve(self.token);
    if (!self.fetch) return Promise.resolve(self.token);
    if (!self.pending) {
      self.pending = Promise.resolve()
        .then(function () { return self.fetch(); })
        .then(function (token) { if (token) self.accept(token); return self.token; },
              function () { return self.token; })  // keep the old one; the server says why
        .then(function (token) { self.pending = null; return token; });
    }
    return self.pending;
  };

  TokenSource.prototype.expire = function () {
    this.refreshAt = 0;
  };

  // ---- Reconnecting ----------------------------------------------------------------

  // When to try again after a lost or failed connection: "full jitter", a delay
  // drawn at random from 0 to a window that doubles with every failed attempt
  // (`base`, 2·base, 4·base, ... up to `cap`). When a web process restarts, all
  // of its clients come back together; drawn over the whole window they arrive
  // at an even rate, where socket.io's own backoff (the exponential, ±50%) brings
  // them back in waves. A floor (a busy server's `retry_after`) comes first: the
  // random delay is added to it.
  function Backoff(base, cap) {
    this.base = base;
    this.cap = cap;
    this.attempts = 0;
  }

  // The delay (ms) before the next attempt: `floor` ms, plus up to the window.
  Backoff.prototype.next = function (floor) {
    var window = Math.min(this.cap, this.base * Math.pow(2, Math.min(this.attempts, 30)));
    this.attempts++;
    return (floor || 0) + Math.random() * window;
  };

  Backoff.prototype.reset = function () {
    this.attempts = 0;
  };

  // A refusal's `retry_after` (seconds, in the error's data), as a floor in ms.
  function retryAfter(error) {
    var hint = Number(error && error.data && error.data.retry_after);
    return hint > 0 ? Math.min(hint, RETRY_AFTER_MAX) * 1000 : 0;
  }

  // ---- Failures, said plainly --------------------------------------------------------

  // Whether a request that failed with `status` (0: no answer at all) may work later.
  function retryable(status) {
    return status === 0 || status === 408 || status === 429 || status >= 500;
  }

  // The Error a failed request rejects with: `status`, `retryable`, and a message a
  // person can act on. Herald out of reach (0, 502, 504) or without Redis (503)
  // is said as such; otherwise the server's own words (`said`), which name the field.
  // `change` is true for a request that changes something (it was not saved).
  function failure(status, said, change) {
    var outcome = change ? 'your change was not saved.' : 'this could not be loaded.';
    var message;
    if (status === 0 || status === 502 || status === 504) {
      message = UNREACHABLE + ': ' + outcome;
    } else if (status === 503) {
      message = UNREACHABLE + ' (its database, Redis, is not answering): ' + outcome;
    } else if (status === 429) {
      message = 'Too many requests: ' + outcome + ' Try again in a moment.';
    } else {
      message = said || 'HTTP ' + status;
    }
    var error = new Error(message);
    error.status = status;
    error.retryable = retryable(status);
    if (said && said !== message) error.detail = said;
    return error;
  }

  // ---- The client ----------------------------------------------------------------

  function Client(options) {
    var self = this;
    options = options || {};
    if (!options.token && !options.getToken) {
      throw new Error('Herald.connect: give a token or a getToken function');
    }
    var refresh = [].concat(options.refresh || []);
    refresh.forEach(function (stream) {
      if (typeof stream !== 'string' || !TOPIC.test(stream)) {
        throw new Error('Herald.connect: refresh ' + JSON.stringify(stream) + ' is not a stream name ' +
                        '(dot-separated segments of a-z, 0-9, _ and -)');
      }
    });
    var io = options.io || root.io;
    self.options = options;
    self.io = typeof io === 'function' ? io : null;  // else loaded from Herald when opening
    self.base = baseUrl(options.url);
    self.dispatcher = options.dispatcher || makeDispatcher();
    self.tokens = new TokenSource(options);
    self.user = options.user || self.tokens.claims.sub || null;
    var key = options.remember && self.user ? 'herald.lastId.' + self.user : null;
    self.cursor = new Cursor(key, options.lastId);
    self.topics = (options.topics || []).slice();
    // The page's refresh streams: `<stream>.refresh` says the stream changed.
    self.refreshTopics = {};
    refresh.forEach(function (stream) {
      var topic = stream + '.refresh';
      self.refreshTopics[topic] = true;
      if (self.topics.indexOf(topic) < 0) self.topics.push(topic);
    });
    self.page = null;       // the PageRefresh, once one is needed
    self.state = 'connecting';
    self.redis = 'up';      // as the server last said (`status`)
    self.retryAt = null;    // when the next reconnect is tried (ms), while one waits
    self.socket = null;
    self.opened = new Promise(function (resolve) { self._opened = resolve; });
    self.closed = false;
    // Two counts of failed attempts: the server out of reach (lost), and the
    // server answering "unavailable" (refused: its retry_after, when it gives
    // one, already spreads the crowd, so the window starts small again there).
    self.lost = new Backoff(options.reconnectionDelay || 500, options.reconnectionDelayMax || 5000);
    self.refusals = new Backoff(options.reconnectionDelay || 500, UNAVAILABLE_CAP);
    self.retryTimer = null;
    // Start on the next tick, so that listeners added right after connect() hear everything.
    Promise.resolve().then(function () { return self._start(); });
  }

  // `url` as {origin, path}: where Herald lives, maybe under a path behind a proxy.
  function baseUrl(url) {
    var parsed = new root.URL(url || '/', root.location.href);
    return {origin: parsed.origin, path: parsed.pathname.replace(/\/+$/, '')};
  }

  // client.on/once/off/trigger are the dispatcher's.
  ['on', 'once', 'off', 'trigger'].forEach(function (name) {
    Client.prototype[name] = function () {
      var result = this.dispatcher[name].apply(this.dispatcher, arguments);
      return result === this.dispatcher ? this : result;
    };
  });

  Client.prototype._state = function (state) {
    // Retrying while the machine has no network is being offline, as people see it.
    if (state === 'reconnecting' && root.navigator && root.navigator.onLine === false) {
      state = 'offline';
    }
    if (state === this.state && state !== 'connected') return;
    this.state = state;
    this.dispatcher.trigger('connection', state);
  };

  Client.prototype._start = function () {
    var self = this;
    if (!self.options.snapshot && !self.options.load) return self._open();
    return self._loadSnapshot().then(function () { self._open(); }, function () { self._open(); });
  };

  // What the page shows first, over REST: the newest `snapshot` notifications
  // of the user's feed (a `snapshot` event), or whatever the page's own `load`
  // function reads (a promise of a reply with `last_id`, as /api/notifications
  // gives). The cursor moves to where that read ended, so the socket resumes
  // right after it; a `reset` runs it again.
  Client.prototype._loadSnapshot = function () {
    var self = this;
    var loading = self.options.load ? Promise.resolve(self.options.load(self)) :
      self.history({limit: self.options.snapshot}).then(function (reply) {
        self.dispatcher.trigger('snapshot', reply.notifications);
        return reply;
      });
    return loading.then(function (reply) {
      self.cursor.advance(reply && reply.last_id);
      return reply;
    });
  };

  // Herald's address for `path` (under its path, behind a proxy).
  Client.prototype._url = function (path) {
    return this.base.origin + this.base.path + path;
  };

  Client.prototype._open = function () {
    var self = this;
    if (self.closed || self.loadingIo) return;
    if (!self.io && typeof root.io === 'function') self.io = root.io;
    if (!self.io) return self._loadSocketIo();
    var socket = self.socket = self.io(self.base.origin + NAMESPACE, {
      path: self.base.path + '/socket.io',
      transports: self.options.transports || ['websocket', 'polling'],
      reconnection: false,  // every retry is the client's own, with full jitter (_retry)
      auth: function (callback) {
        self.tokens.get().then(function (token) {
          var auth = {token: token};
          if (self.cursor.value) auth.last_id = self.cursor.value;
          callback(auth);
        });
      }
    });
    self._opened(socket);

    socket.on('connect', function () {
      self.retriedAuth = false;
      self.retryAt = null;
      // The server says `status` on connect only while Redis is down: a `down`
      // heard before (the `up` may have come while we were away) is over.
      if (self.redis === 'down') self._status({redis: 'up', since: Date.now()});
      self._state('connected');
      // An empty subscribe changes nothing and answers with the full list.
      self.subscribe(self.topics).catch(function () { /* reported as subscriptions:error */ });
      self.dispatcher.trigger('connected');
      if (self.options.readState) {
        self.readState().then(function (state) { self.dispatcher.trigger('read', state); },
                              function () { /* the next connect tries again */ });
      }
    });
    // Lost (the server went away, the network) or closed by the server on purpose
    // (too slow, say): connect again, after the backoff's delay.
    socket.on('disconnect', function (reason) {
      if (reason === 'io client disconnect') return self._state('offline');
      self._retry(self.lost);
    });
    // A connect that failed on the way (no server, no network) leaves the socket
    // active; one the server refused does not.
    socket.on('connect_error', function (error) {
      if (socket.active) return self._retry(self.lost);
      self._refused(error);
    });

    socket.on('notification', function (envelope) { self._pump(envelope); });
    socket.on('notifications', function (list) {
      for (var i = 0; i < list.length; i++) self._pump(list[i]);
    });
    // How the replay on connect went: when anything may have been missed (history
    // trimmed past our cursor, or the stream recreated), the page reloads its view.
    // (`reset`, which comes before it then, needs nothing more.)
    socket.on('replayed', function (outcome) {
      self.lost.reset();  // live again: the next loss starts from the first window
      self.refusals.reset();
      if (outcome && outcome.recovered === false) {
        self.cursor.restart(outcome.last_id);
        self._reset();
      } else {
        self.cursor.advance(outcome && outcome.last_id);
      }
      self.dispatcher.trigger('replayed', outcome);
    });
    socket.on('read', function (change) { self.dispatcher.trigger('read', change); });
    socket.on('state', function (change) { self.dispatcher.trigger('state', change); });
    socket.on('presence', function (change) { self.dispatcher.trigger('presence', change); });
    socket.on('status', function (status) { self._status(status); });

    // The machine lost its network: say so, and drop the connection (it may
    // look open a while yet), so that coming back is a reconnect with replay,
    // never a silently stale socket. Back online, it tries again soon (within
    // the first window: the machines of a whole office may come back together).
    self._offline = function () {
      self._state('offline');
      if (socket.io.engine) socket.io.engine.close();
    };
    self._online = function () {
      if (socket.connected) return self._state('connected');
      self.lost.reset();
      self._retry(self.lost);
    };
    root.addEventListener('offline', self._offline);
    root.addEventListener('online', self._online);
  };

  // socket.io-client is not on the page (it comes from Herald, and Herald was
  // down when the page loaded): load it from Herald (`socketIoUrl`), and
  // when that fails, try again after the reconnect backoff's delay, until it
  // comes; then the socket opens with the cursor, as a reconnect does.
  Client.prototype._loadSocketIo = function () {
    var self = this;
    var url = self.options.socketIoUrl || self._url('/client/socket.io.js');
    self.loadingIo = true;
    loadScript(url, 'io').then(function (io) {
      self.loadingIo = false;
      if (typeof io !== 'function') throw new Error(url + ' did not define io');
      self.io = io;
      self._open();
    }).catch(function (error) {
      self.loadingIo = false;
      if (self.socket) return report(error);  // opened: the error was _open's own
      self._retry(self.lost, 0, 'socket.io-client could not be loaded from ' + url);
    });
  };

  // Whether the server reaches Redis: {redis: 'up'|'down', since: ms}.
  Client.prototype._status = function (status) {
    if (!status || (status.redis !== 'up' && status.redis !== 'down')) return;
    this.redis = status.redis;
    this.dispatcher.trigger('status', status);
  };

  // Connect again after `backoff`'s delay, never sooner than `floor` ms; a retry
  // already waiting is replaced. `retrying` says when ({at, delay}, ms) and, for
  // a refusal, why (`reason`, the server's message).
  Client.prototype._retry = function (backoff, floor, reason) {
    var self = this;
    if (self.closed) return;
    self._state('reconnecting');
    clearTimeout(self.retryTimer);
    var delay = backoff.next(floor);
    self.retryAt = Date.now() + delay;
    self.retryTimer = setTimeout(function () {
      self.retryTimer = null;
      self.retryAt = null;
      if (self.closed) return;
      if (!self.socket) self._open();  // socket.io-client could not be loaded yet
      else if (!self.socket.connected) self.socket.connect();
    }, delay);
    self.dispatcher.trigger('retrying', {at: self.retryAt, delay: delay, reason: reason || null});
  };

  // Try to connect now, not when the waiting retry is due ("Retry now"). Once
  // the client has given up (refused for good), this tries again too. The
  // backoff is not reset: if this fails, the next wait is the longer one.
  Client.prototype.reconnect = function () {
    if (this.closed || this.loadingIo || (this.socket && this.socket.connected)) return false;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.retryAt = null;
    this.retriedAuth = false;
    this._state('reconnecting');
    if (this.socket) this.socket.connect(); else this._open();
    return true;
  };

  // The server refused the connection: a stale token is renewed and tried once
  // more; an unavailable server (Redis away, or busy with a reconnect storm) is
  // retried later, no sooner than the `retry_after` it gave; anything else is final.
  Client.prototype._refused = function (error) {
    var self = this, message = String(error && error.message);
    if (/^unauthorized/.test(message) && !self.retriedAuth) {
      self.retriedAuth = true;
      self.tokens.expire();
      self._state('reconnecting');
      return self.socket.connect();
    }
    if (/^unavailable/.test(message)) return self._retry(self.refusals, retryAfter(error), message);
    self._state('offline');
    self.dispatcher.trigger('error', error);
  };

  // Deliver a notification, once: to the dispatcher, as a DOM event
  // `herald:<topic>` on the body (unless `domEvents: false`), and to the
  // page's refresh when it says that one of the page's streams changed.
  Client.prototype._pump = function (envelope) {
    if (!this.cursor.advance(envelope.id)) return;  // seen already
    this.dispatcher.trigger('notification', envelope);
    this.dispatcher.trigger('notification:' + envelope.topic, envelope);
    var target = this.options.domEvents !== false && eventTarget();  // none without a page
    if (target) domEvent(target, 'herald:' + envelope.topic, envelope);
    if (this.refreshTopics[envelope.topic]) this._page().schedule();
  };

  // The replay could not cover the gap: the page hears `reset`, reloads its
  // feed (snapshot, load) and, when it refreshes from streams, refreshes.
  Client.prototype._reset = function () {
    var self = this;
    self.dispatcher.trigger('reset');
    if (Object.keys(self.refreshTopics).length) self._page().schedule();
    if (self.options.snapshot || self.options.load) {
      self._loadSnapshot().catch(function () { /* the page keeps what it has */ });
    }
  };

  // Emit `event` with `payload` (once the socket exists; socket.io holds it
  // until connected); a promise of the server's acknowledgement, rejected
  // with the server's error, or when none came within ACK_TIMEOUT.
  Client.prototype._request = function (event, payload) {
    return this.opened.then(function (socket) {
      return new Promise(function (resolve, reject) {
        socket.timeout(ACK_TIMEOUT).emit(event, payload, function (timedOut, ack) {
          if (timedOut) return reject(new Error(event + ': no answer from Herald'));
          if (ack && ack.ok) return resolve(ack);
          reject(new Error((ack && ack.error) || event + ': refused'));
        });
      });
    });
  };

  Client.prototype._changeSubscriptions = function (action, topics) {
    var dispatcher = this.dispatcher;
    return this._request(action, {topics: topics}).then(function (ack) {
      dispatcher.trigger('subscriptions', ack.topics);
      return ack.topics;
    }, function (error) {
      dispatcher.trigger('subscriptions:error', error.message);
      throw error;
    });
  };

  // Subscribe the user to topic prefixes; a promise of their full list.
  Client.prototype.subscribe = function (topics) {
    return this._changeSubscriptions('subscribe', topics);
  };

  Client.prototype.unsubscribe = function (topics) {
    return this._changeSubscriptions('unsubscribe', topics);
  };

  // Ask for `presence` events ({user, online, at}) on this connection: a
  // promise of who is online now ([{user, since}]). Ask again on each
  // 'connected' (a new connection starts without them).
  Client.prototype.watchPresence = function (watch) {
    return this._request('presence', {watch: watch !== false}).then(function (ack) {
      return ack.online || [];
    });
  };

  // Change the read state: any of {ids: [...]} (read), {upto: id} (all read up to it),
  // {unread: [...]} (unread again) and {seen: id} (all shown up to it, for the badge);
  // every tab of the user hears `read`. A token limited by its `topics` claim is
  // refused `upto` and `seen` (account-wide), and ids it may not see.
  // Not connected, it fails at once (it would only be lost): see `action:error`.
  Client.prototype.markRead = function (change) {
    var self = this, what = {action: 'read', ids: (change && change.ids) || []};
    if (!self.socket || !self.socket.connected) {
      return Promise.reject(self._actionFailed(failure(0, null, true), what));
    }
    return self._request('read', change).catch(function (error) {
      // No answer in time, or the server's refusal (Redis away says "unreachable").
      var status = /no answer/.test(error.message) ? 0 :
        /unreachable/i.test(error.message) ? 503 : 400;
      throw self._actionFailed(failure(status, error.message, true), what);
    });
  };

  // A change failed: tell the page (`action:error`), once; the error is returned.
  Client.prototype._actionFailed = function (error, what) {
    error.action = what.action;
    error.ids = what.ids || [];
    if (!error.reported) {
      error.reported = true;
      this.dispatcher.trigger('action:error', error.message, {
        message: error.message, status: error.status, retryable: error.retryable,
        action: error.action, ids: error.ids, error: error
      });
    }
    return error;
  };

  // fetch() `url` with `init`; a promise of the JSON answer, or of a failure()
  // (`change`: the request changes something). No answer at all is status 0.
  function fetchJSON(url, init, change) {
    return root.fetch(url, init).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.ok) return body;
        var error = failure(response.status, body && body.error, change);
        error.response = response;
        throw error;
      });
    }, function (cause) {
      var error = failure(0, null, change);
      error.cause = cause;  // "Failed to fetch", as the browser put it
      throw error;
    });
  }

  // GET a Herald API path with the user's token; a promise of the JSON. A
  // refused token is renewed (getToken) and the request made once more.
  Client.prototype.get = function (path, params) {
    var self = this;
    var url = self.base.origin + self.base.path + path;
    var query = Object.keys(params || {}).filter(function (k) { return params[k] != null; })
      .map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(params[k]); });
    if (query.length) url += '?' + query.join('&');
    function attempt(retry) {
      return self.tokens.get().then(function (token) {
        return fetchJSON(url, {headers: {Authorization: 'Bearer ' + token},
                               credentials: 'omit', cache: 'no-store'}, false);
      }).catch(function (error) {
        if (error.status === 401 && retry && self.tokens.fetch) {
          self.tokens.expire();
          return attempt(false);
        }
        throw error;
      });
    }
    return attempt(true);
  };

  // POST (or with `method`, another verb) JSON to a Herald API path with the
  // user's token; a promise of the JSON answer. A failure is also `action:error`.
  Client.prototype.send = function (path, body, method) {
    return this._change(path, body, method, {action: 'send'});
  };

  Client.prototype._change = function (path, body, method, what) {
    var self = this;
    return self.tokens.get().then(function (token) {
      return fetchJSON(self.base.origin + self.base.path + path, {
        method: method || 'POST', credentials: 'omit', cache: 'no-store',
        headers: {Authorization: 'Bearer ' + token, 'Content-Type': 'application/json'},
        body: body === undefined ? undefined : JSON.stringify(body)
      }, true);
    }).catch(function (error) {
      throw self._actionFailed(error, what);
    });
  };

  // Archive or bring back ids; snooze one until a time (ms), or wake it now.
  var STATE = '/api/notification-state';
  Client.prototype.archive = function (ids) {
    return this._change(STATE, {archive: ids}, 'POST', {action: 'archive', ids: ids});
  };
  Client.prototype.unarchive = function (ids) {
    return this._change(STATE, {unarchive: ids}, 'POST', {action: 'unarchive', ids: ids});
  };
  Client.prototype.snooze = function (id, until) {
    return this._change(STATE, {snooze: {id: id, until: until}}, 'POST', {action: 'snooze', ids: [id]});
  };
  Client.prototype.unsnooze = function (id) {
    return this._change(STATE, {unsnooze: id}, 'POST', {action: 'unsnooze', ids: [id]});
  };
  Client.prototype.notificationState = function () {
    return this.get('/api/notification-state');
  };

  // The user's feed over REST: {after, limit} -> {notifications, last_id}.
  Client.prototype.history = function (params) {
    return this.get('/api/notifications', params);
  };

  Client.prototype.readState = function () {
    return this.get('/api/read-state');
  };

  Client.prototype.close = function () {
    this.closed = true;
    clearTimeout(this.retryTimer);
    if (this._offline) {
      root.removeEventListener('offline', this._offline);
      root.removeEventListener('online', this._online);
    }
    if (this.page) this.page.stop();
    if (this.socket) this.socket.disconnect();
  };

  // ---- Page refresh by morphing ------------------------------------------------------

  var REFRESH_DELAY = 150;      // ms after the last of a burst of changes (option refreshDelay)
  var REFRESH_MAX_WAIT = 1000;  // ms: a steady stream of changes postpones a refresh no longer
  var REFRESH_RETRY = 3000;     // ms: a refresh that failed is tried again once, this much later
  var PERMANENT = 'data-herald-permanent';

  // True for a form field whose value the user changed (typed, ticked, chose)
  // since the page was rendered: a refresh leaves it as it is, focused or not.
  function edited(node) {
    var tag = node.tagName;
    if (tag === 'TEXTAREA') return node.value !== node.defaultValue;
    if (tag === 'SELECT') return selectEdited(node);
    if (tag !== 'INPUT') return false;
    if (node.type === 'checkbox' || node.type === 'radio') return node.checked !== node.defaultChecked;
    return node.type !== 'hidden' && node.type !== 'file' && node.value !== node.defaultValue;
  }

  // A <select> whose choice is not the one it was rendered with. A single
  // select rendered with no option `selected` shows its first option: that is
  // its default, not a choice of the user's.
  function selectEdited(node) {
    var options = node.options || [], i;
    if (node.multiple) {
      for (i = 0; i < options.length; i++) {
        if (options[i].selected !== options[i].defaultSelected) return true;
      }
      return false;
    }
    var rendered = options.length ? 0 : -1;
    for (i = 0; i < options.length; i++) {
      if (options[i].defaultSelected) rendered = i;  // the last one marked wins, as in HTML
    }
    return node.selectedIndex !== rendered;
  }

  // Idiomorph's options for a refresh: the body itself is morphed into the
  // new one (outerHTML: the same element, its attributes brought up to date,
  // so the window keeps its scroll and listeners on kept elements stay); the
  // field being typed in, and any field the user changed, keep their values,
  // and focus and selection are put back where they were; an element with an
  // id and data-herald-permanent is left as it is.
  var MORPH_OPTIONS = {
    morphStyle: 'outerHTML',
    ignoreActiveValue: true,
    restoreFocus: true,
    callbacks: {
      beforeNodeMorphed: function (node) {
        if (node.nodeType !== 1) return true;
        return !(node.id && node.hasAttribute(PERMANENT)) && !edited(node);
      }
    }
  };

  // Refreshes the page when one of its streams changed: fetches it again and
  // morphs the body into the new one. A burst of changes makes one refresh
  // (`delay` after the last one, at most REFRESH_MAX_WAIT after the first);
  // one at a time: changes heard during a refresh make one more after it. A
  // refresh that failed is tried again once, REFRESH_RETRY later; the page is
  // never reloaded.
  function PageRefresh(client) {
    var delay = client.options.refreshDelay;
    this.client = client;
    this.delay = typeof delay === 'number' && delay >= 0 ? delay : REFRESH_DELAY;
    this.timer = null;
    this.first = 0;         // when the first change of the waiting burst came (ms)
    this.running = null;    // the promise of the refresh under way
    this.again = false;     // a change came during it
    this.failures = 0;      // refreshes failed in a row since the last change
  }

  // A change was heard: refresh soon (after `delay`, or REFRESH_RETRY for the
  // retry of one that failed).
  PageRefresh.prototype.schedule = function (retry) {
    var self = this, now = Date.now();
    if (!retry) self.failures = 0;
    if (self.running) {
      self.again = true;
      return;
    }
    if (self.timer) {
      if (now - self.first >= REFRESH_MAX_WAIT) return;  // due within `delay`: not put off again
      clearTimeout(self.timer);
    } else {
      self.first = now;
    }
    self.timer = setTimeout(function () {
      self.timer = null;
      self.run();
    }, retry ? REFRESH_RETRY : self.delay);
  };

  // Refresh now: a promise of true once the page is refreshed, false when it
  // could not be (`refresh:error` says why). During a refresh, one more follows it.
  PageRefresh.prototype.run = function () {
    var self = this, client = self.client, document = root.document;
    clearTimeout(self.timer);
    self.timer = null;
    if (self.running) {
      self.again = true;
      return self.running;
    }
    self.again = false;
    var url = root.location.href, status = 0, retry = false;
    var page = Promise.resolve().then(function () {
      return root.fetch(url, {credentials: 'same-origin', cache: 'no-store',
                              headers: {Accept: 'text/html', 'X-Herald-Refresh': '1'}});
    }).then(function (response) {
      status = response.status;
      if (!response.ok) throw new Error('HTTP ' + response.status);
      // Sent elsewhere (a sign-in page, once the session ended): that page is not
      // this one's next state, and is never morphed in.
      if (response.redirected) throw new Error('the page answered with another (' + response.url + ')');
      return response.text();
    });
    function morph(loaded) {
      if (client.closed) return false;
      if (root.location.href !== url) {  // the page moved on (pushState): refresh it there
        self.again = true;
        return false;
      }
      var fresh = new root.DOMParser().parseFromString(loaded[0], 'text/html');
      if (!fresh || !fresh.body) throw new Error('the answer is not an HTML page');
      loaded[1].morph(document.body, fresh.body, MORPH_OPTIONS);
      if (fresh.title) document.title = fresh.title;
      self.failures = 0;
      try {
        client.dispatcher.trigger('refreshed', {url: url});
      } catch (error) {
        report(error);  // a listener's; the page is refreshed all the same
      }
      domEvent(document, 'herald:refreshed', {url: url});
      return true;
    }
    function failed(cause) {
      var error = new Error('Herald could not refresh the page: ' + ((cause && cause.message) || cause));
      error.cause = cause;
      error.status = status;  // 0: no answer (or not the page's fault)
      retry = !client.closed && self.failures++ === 0;
      client.dispatcher.trigger('refresh:error', error, {url: url, status: status, retrying: retry});
      return false;
    }
    function settle(done) {
      self.running = null;
      if (client.closed) return false;
      if (self.again) self.schedule();
      else if (retry) self.schedule(true);
      return done === true;
    }
    self.running = Promise.all([page, client._idiomorph()])
      .then(morph)
      .catch(failed)
      .then(settle, function (error) {  // a listener of ours threw
        report(error);
        return settle(false);
      });
    return self.running;
  };

  PageRefresh.prototype.stop = function () {
    clearTimeout(this.timer);
    this.timer = null;
  };

  // The page's refresh (made when first needed).
  Client.prototype._page = function () {
    return this.page || (this.page = new PageRefresh(this));
  };

  // Refresh the page now (see PageRefresh): a promise of true once refreshed.
  Client.prototype.refresh = function () {
    return this._page().run();
  };

  // Idiomorph: the page's own, else loaded from Herald (`idiomorphUrl`).
  Client.prototype._idiomorph = function () {
    return loadScript(this.options.idiomorphUrl || this._url('/client/idiomorph.js'), 'Idiomorph');
  };

  // ---- Live Backbone collections and plain stores ------------------------------------

  // A plain store of records, by id, in the order they came, for pages without
  // a framework: Map-like (get, set, delete, has, keys, values, forEach, size),
  // with the events a page renders from: `add` (record), `change` (record,
  // previous), `remove` (record) and `update` after any of them, once for all
  // the changes of a batch(fn) (Herald.sync batches a fetch and each page of a
  // catch-up). Ids are compared as strings, as Backbone does (1 and '1' are
  // one record); keys() gives them as strings. Usage:
  //
  //     var cards = new Herald.Store(page.cards);  // records with an `id`, kept silently
  //     cards.on('update', function () { render(cards.values()); });
  //     Herald.sync(cards, 'board.card', {since: page.heraldCursor});
  function Store(records, options) {
    var self = this;
    self._events = {};
    self._records = new Map();
    self._batching = 0;
    self._changed = false;
    self.idAttribute = (options && options.idAttribute) || 'id';
    (records || []).forEach(function (record) {
      self._records.set(String(record[self.idAttribute]), record);
    });
  }

  Store.prototype.on = Emitter.prototype.on;
  Store.prototype.once = Emitter.prototype.once;
  Store.prototype.off = Emitter.prototype.off;
  Store.prototype.trigger = Emitter.prototype.trigger;

  Store.prototype.get = function (id) {
    return this._records.get(String(id));
  };

  Store.prototype.has = function (id) {
    return this._records.has(String(id));
  };

  // Put `record` under `id`: `add`, or `change` with the record it replaces; then `update`.
  Store.prototype.set = function (id, record) {
    var key = String(id), previous = this._records.get(key);
    this._records.set(key, record);
    if (previous === undefined) this.trigger('add', record, this);
    else this.trigger('change', record, previous, this);
    this._updated();
    return this;
  };

  // Take the record under `id` out: `remove`, then `update`. False when there was none.
  Store.prototype['delete'] = function (id) {
    var key = String(id), record = this._records.get(key);
    if (record === undefined) return false;
    this._records['delete'](key);
    this.trigger('remove', record, this);
    this._updated();
    return true;
  };

  Store.prototype.keys = function () {
    var keys = [];
    this._records.forEach(function (record, key) { keys.push(key); });
    return keys;
  };

  Store.prototype.values = function () {
    var values = [];
    this._records.forEach(function (record) { values.push(record); });
    return values;
  };

  // callback(record, id, store) for each record, in order.
  Store.prototype.forEach = function (callback, context) {
    var self = this;
    self._records.forEach(function (record, key) { callback.call(context, record, key, self); });
  };

  Object.defineProperty(Store.prototype, 'size', {
    get: function () { return this._records.size; }
  });

  // Make the changes `fn` makes, then say `update` once (if anything changed).
  Store.prototype.batch = function (fn) {
    this._batching++;
    try {
      fn();
    } finally {
      if (--this._batching === 0 && this._changed) {
        this._changed = false;
        this.trigger('update', this);
      }
    }
  };

  Store.prototype._updated = function () {
    if (this._batching) this._changed = true;
    else this.trigger('update', this);
  };

  // Whether Herald.sync's `target` is a Backbone collection (add, remove, on
  // and get), not a plain store: a Map has no add, remove or on; a Set no
  // remove or get; a Herald.Store no add or remove (and is told by its class).
  function isCollection(target) {
    return !(target instanceof Store) && typeof target.add === 'function' &&
      typeof target.remove === 'function' && typeof target.on === 'function' &&
      typeof target.get === 'function';
  }

  // The ids in a plain store: its keys(), else what its forEach(value, key)
  // gives, else those that Herald.sync put there (`written`: id -> id).
  function idsIn(store, written) {
    var ids = [], id;
    if (typeof store.keys === 'function') {
      var keys = store.keys();
      if (Array.isArray(keys)) return keys.slice();
      for (var step = keys.next(); !step.done; step = keys.next()) ids.push(step.value);
      return ids;
    }
    if (typeof store.forEach === 'function') {
      store.forEach(function (value, key) { ids.push(key); });
      return ids;
    }
    for (id in written) ids.push(written[id]);
    return ids;
  }

  var CATCH_UP_LIMIT = 1000;   // notifications per page of the catch-up read (the server's most)
  var CATCH_UP_PAGES = 20;     // at most this many pages (20,000 changes): past that, fall back
  var CATCH_UP_RETRIES = 4;    // a failed catch-up read is tried again this many times...
  var catchUpBackoff = function () { return new Backoff(1000, 8000); };  // ...after these delays (ms)

  // Keep `target`, a Backbone collection or a plain store, in step with
  // `<prefix>.created|updated|deleted` notifications whose `data` is the
  // record (see Herald.sync).
  Client.prototype.sync = function (target, prefix, options) {
    options = options || {};
    var self = this;
    var backbone = isCollection(target);
    if (!backbone && !(typeof target.get === 'function' && typeof target.set === 'function' &&
                       typeof target['delete'] === 'function')) {
      throw new Error('Herald.sync: give a Backbone collection, a Map, a Herald.Store ' +
                      'or a store with get(id), set(id, record) and delete(id)');
    }
    if (!backbone && options.fetch && typeof options.fetch !== 'function') {
      throw new Error('Herald.sync: a plain store is fetched by a function that returns ' +
                      'its records (or a promise of them): {fetch: function () { ... }}');
    }
    var versionOf = options.version || 'version';
    var idAttribute = backbone ? (target.model && target.model.prototype.idAttribute) || 'id' :
      options.idAttribute || target.idAttribute || 'id';
    var since = options.since == null || options.since === '' ? null : String(options.since);
    var deleted = {};  // id -> version at deletion, so a late stale update cannot revive it
    var held = null;   // notifications that came while the target was being fetched
    var written = {};  // id -> id: what this sync put in a plain store (see idsIn)
    var fetches = 0;   // a plain store's fetches begun: only the newest one's records count
    // While the catch-up read runs: record id -> id of the newest notification
    // applied to it (live or caught up), so that the catch-up never applies a
    // change older than one already applied, even to records without versions.
    var touched = null;
    var stopped = false, retryTimer = null, wake = null;  // the catch-up's wait to read again

    // The target's record under `id` (a model, or a plain record), or null; its
    // version; put a record in; take one out; many changes at once.
    function find(id) {
      var found = target.get(id);
      return found == null ? null : found;
    }
    function versionIn(found) {
      return backbone ? found.get(versionOf) : found[versionOf];
    }
    function put(id, record, found) {
      if (!backbone) {
        target.set(id, record);
        written[id] = id;
      } else if (found) {
        found.set(record);
      } else {
        target.add(record);
      }
    }
    function drop(id, found) {
      if (backbone) return target.remove(found);
      target['delete'](id);
      delete written[id];
    }
    function batch(fn) {
      if (!backbone && typeof target.batch === 'function') target.batch(fn); else fn();
    }

    function stale(record, previous, strictly) {
      var incoming = record[versionOf];
      if (incoming == null || previous == null) return false;
      return strictly ? incoming < previous : incoming <= previous;
    }

    function apply(action, record, at) {
      var id = record[idAttribute];
      if (id == null) return;
      // (Notification ids. Those of one shard compare exactly; a prefix's public
      // and private ones may be in two shards, which compare by time.)
      if (touched && at) {
        if (touched[id] && compareIds(at, touched[id]) <= 0) return;  // older than one applied
        touched[id] = at;
      }
      var existing = find(id);
      var current = existing ? versionIn(existing) : deleted[id];
      if (action === 'deleted') {
        if (stale(record, current, true)) return;
        deleted[id] = record[versionOf];
        if (existing) drop(id, existing);
        return;
      }
      if (stale(record, current, false)) return;
      delete deleted[id];
      put(id, record, existing);
    }

    function receive(envelope) {
      var topic = envelope.topic;
      if (typeof topic !== 'string' || topic.slice(0, prefix.length + 1) !== prefix + '.') return;
      var action = topic.slice(prefix.length + 1);
      var record = envelope.data;
      if (!SYNC_ACTIONS[action] || !record || typeof record !== 'object') return;
      if (held) held.push([action, record, envelope.id]); else apply(action, record, envelope.id);
    }

    // While the target fetches, hold what arrives; apply it after, where the
    // versions tell what the fetch already had.
    function release() {
      if (!held) return;
      var waiting = held;
      held = null;
      waiting.forEach(function (item) { apply(item[0], item[1], item[2]); });
    }
    function fetching(collection) {
      if (collection === target && !held) held = [];
    }
    function fetched(collection) {
      if (collection === target) release();
    }

    function failed(error) {
      error.prefix = prefix;
      self.dispatcher.trigger('sync:error', error, {prefix: prefix, collection: target, store: target});
    }

    // A plain store's contents become the records `options.fetch()` gives (a
    // list, or a promise of one); what arrives meanwhile is applied after them.
    function fetchStore() {
      var run = ++fetches, records;
      if (!held) held = [];
      try {
        records = Promise.resolve(options.fetch());  // called now, as a collection's fetch is
      } catch (error) {
        records = Promise.reject(error);
      }
      return records.then(function (records) {
        if (stopped || run !== fetches) return;
        if (!Array.isArray(records)) {
          throw new Error('Herald.sync: fetch for ' + prefix + ' gave no list of records');
        }
        batch(function () {
          replace(records);
          release();
        });
      }).catch(function (error) {
        if (stopped || run !== fetches) return;
        release();
        failed(error);
      });
    }

    // Replace a plain store's records with `records`.
    function replace(records) {
      var fresh = {};
      records.forEach(function (record) {
        if (record && record[idAttribute] != null) fresh[record[idAttribute]] = true;
      });
      idsIn(target, written).forEach(function (id) {
        if (fresh[id]) return;
        target['delete'](id);
        delete written[id];
      });
      records.forEach(function (record) {
        var id = record && record[idAttribute];
        if (id == null) return;
        delete deleted[id];
        put(id, record, null);
      });
    }

    // Fetch the whole target again: a collection's fetch(), a store's
    // options.fetch (a promise of it done).
    function refetch() {
      if (!backbone) return fetchStore();
      if (typeof target.fetch === 'function') target.fetch();
    }

    // The catch-up: what was published under the prefix after `since` (the
    // page's records are as of that cursor), read over REST page by page, oldest
    // first (each page from the cursor the one before ended at, while it moves),
    // and applied like live notifications. Live ones that come
    // meanwhile are applied as they come; versions (and `touched`) keep the
    // newer of the two. A failure that may pass (no answer, 5xx, 429) is read
    // again after a backoff, a few times; then, or at once for any other, the
    // target is fetched whole ({fetch}) or `sync:error` is triggered.
    function catchUp() {
      var backoff = catchUpBackoff(), pages = 0;
      touched = {};
      function read(after) {
        return self.history({after: after, topic: prefix, kind: 'all', limit: CATCH_UP_LIMIT})
          .then(function (reply) {
            if (stopped) return;
            var list = (reply && reply.notifications) || [];
            batch(function () { list.forEach(receive); });
            pages++;
            backoff.reset();
            var next = reply && reply.last_id;
            if (list.length < CATCH_UP_LIMIT || !next || !movedOn(after, next)) return;
            if (pages >= CATCH_UP_PAGES) {
              var error = new Error('Herald.sync: more than ' + CATCH_UP_PAGES * CATCH_UP_LIMIT +
                                    ' changes to catch up on under ' + prefix);
              error.retryable = false;
              throw error;
            }
            return read(next);
          }, function (error) {
            if (stopped) return;
            if (!error.retryable || backoff.attempts >= CATCH_UP_RETRIES) throw error;
            return new Promise(function (resolve) {
              wake = resolve;
              retryTimer = setTimeout(resolve, backoff.next());
            }).then(function () { wake = null; return stopped ? null : read(after); });
          });
      }
      return read(since).then(function () {
        touched = null;
      }, function (error) {
        touched = null;
        if (stopped) return;
        if (options.fetch) return refetch();
        failed(error);
      });
    }

    // The prefix joins the topics subscribed on every connect; once the first
    // subscription covering it is acknowledged, changes flow, and the target
    // may be caught up (`since`) or fetched without missing any.
    var live = false, markReady;
    var ready = new Promise(function (resolve) { markReady = resolve; });
    function subscribed(topics) {
      if (live || !covers(topics, prefix)) return;
      live = true;
      if (since) return catchUp().then(markReady, markReady);  // (a listener of ours threw)
      if (options.fetch && !backbone) return refetch().then(markReady, markReady);
      if (options.fetch) refetch();
      markReady();
    }

    self.dispatcher.on('notification', receive);
    self.dispatcher.on('subscriptions', subscribed);
    if (backbone) {
      target.on('request', fetching);
      target.on('sync error', fetched);
    }
    if (options.fetch) self.dispatcher.on('reset', refetch);  // replay could not cover the gap
    if (self.topics.indexOf(prefix) < 0) self.topics.push(prefix);
    if (self.state === 'connected') self.subscribe([prefix]).catch(function () {});

    return {
      ready: ready,
      stop: function () {
        stopped = true;
        held = null;
        clearTimeout(retryTimer);
        if (wake) wake();  // a catch-up waiting to read again ends now (and `ready` with it)
        self.dispatcher.off('notification', receive);
        self.dispatcher.off('subscriptions', subscribed);
        self.dispatcher.off('reset', refetch);
        if (backbone) {
          target.off('request', fetching);
          target.off('sync error', fetched);
        }
      }
    };
  };

  // ---- The public face ---------------------------------------------------------------

  var Herald = {
    VERSION: '1',
    Client: Client,
    Store: Store,
    compareIds: compareIds,
    // True when notification `id` lies past `cursor` (either form): news to a view
    // that read up to it.
    isPast: function (id, cursor) { return movedOn(cursor, id); },

    // Connect to Herald. Options: url (Herald's address; this page's origin by
    // default), token or getToken (a function returning a token or a promise of
    // one), user (for the stored cursor; a JWT's `sub` by default), topics (to
    // subscribe to on every connect), snapshot (N: load the newest N over REST
    // first, and again after a reset), readState (fetch it on every connect),
    // remember (keep the cursor in localStorage), lastId (a cursor, or a single
    // notification id, to start from), dispatcher, transports,
    // reconnectionDelay and reconnectionDelayMax (ms: the first and the widest
    // window a reconnect's delay is drawn from; 500 and 5000), domEvents (false:
    // no `herald:<topic>` DOM events), socketIoUrl (where socket.io-client is
    // loaded from when the page has no `io`: <url>/client/socket.io.js).
    //
    // refresh: stream names (['board']; Herald.pageOptions reads them from the
    // page's <meta name="herald-refresh" content="board"> tags). The client
    // subscribes to `<stream>.refresh` and, when one comes (the host's outbox
    // publishes it once per transaction that changed a model tracked for the
    // stream), or after a `reset`, refreshes the page: refreshDelay (ms, 150)
    // after the last of a burst and one at a time, it fetches location.href
    // (same-origin credentials, `X-Herald-Refresh: 1`), morphs document.body
    // into the new body with Idiomorph (the page's window.Idiomorph, else loaded
    // from idiomorphUrl, <url>/client/idiomorph.js), keeping scroll, focus and
    // the value being typed, sets document.title, triggers `refreshed` and
    // dispatches `herald:refreshed` on document. One that fails triggers
    // `refresh:error` and is tried again once, 3 s later.
    //
    // Throws only for a missing token and getToken, and a refresh name that is
    // no stream: a Herald that cannot be reached (even one whose
    // socket.io-client could not be loaded) is retried until it answers.
    connect: function (options) {
      var client = new Client(options);
      Herald.current = client;
      return client;
    },

    // Options for connect() from the page: a page rendered with the Python
    // client's Flask extension (`{{ herald_scripts() }}`) carries Herald's URL,
    // a token for its user, where to renew it and the cursor its content is as
    // of (`lastId`: the first connect replays what came after) in a JSON block, and the
    // streams it refreshes from in <meta name="herald-refresh" content="STREAM">
    // tags (`{{ herald_refresh("board") }}`: options.refresh); `extra` options
    // are added (topics, snapshot, ...) and win.
    pageOptions: function (extra, elementId) {
      var element = root.document.getElementById(elementId || 'herald-connect');
      if (!element) {
        throw new Error('Herald.pageOptions: this page has no #herald-connect block ' +
                        '(render {{ herald_scripts() }} in its template)');
      }
      var settings = JSON.parse(element.textContent);
      var options = {url: settings.url, token: settings.token, user: settings.user};
      // Where the page's content is as of: the first connect replays what came after.
      if (settings.lastId) options.lastId = settings.lastId;
      var refresh = metaContents('herald-refresh');
      if (refresh.length) options.refresh = refresh;
      if (settings.tokenUrl) {
        options.getToken = function () {
          return root.fetch(settings.tokenUrl, {credentials: 'same-origin', cache: 'no-store'})
            .then(function (response) {
              if (!response.ok) throw new Error('token: HTTP ' + response.status);
              return response.json();
            })
            .then(function (reply) { return reply.token; });
        };
      }
      for (var key in extra || {}) options[key] = extra[key];
      return options;
    },

    // Keep a Backbone collection, or a plain store, live: `<prefix>.created`,
    // `.updated` and `.deleted` notifications whose `data` is a record (with its
    // id, and optionally a `version`) add, update or remove it, ignoring stale
    // versions (a version not newer than the one held; a deletion older than
    // it), and a deleted record is not brought back by a late stale update.
    // Subscribes the user to `prefix`; with {fetch: true} the collection is
    // fetched once that subscription is live (and again after a reset), and
    // what arrives during any fetch is applied after it. Returns {ready, stop}:
    // `ready` resolves once the subscription is live (and the catch-up done).
    //
    // A plain store: a Map, a Herald.Store, or any object with get(id),
    // set(id, record) and delete(id) that is not a Backbone collection (one has
    // add, remove, on and get); records are plain objects, their id is
    // record[options.idAttribute || store.idAttribute || 'id'] and their version
    // record[options.version || 'version']. Its `fetch` is a function returning
    // the records (a list, or a promise of one), which replace the store's
    // contents (the ids it no longer lists are deleted: a store is listed by its
    // keys(), else its forEach, else by what this sync put in it); it runs
    // where a collection's fetch would, `ready` waits for the first, what
    // arrives meanwhile is applied after it, and one that fails is a
    // `sync:error`. A store with batch(fn), as Herald.Store, gets a fetch and
    // each page of a catch-up as one batch (one `update`).
    //
    // {since: cursor}: the collection holds the records as of that cursor (a
    // notification id, or with a sharded history a per-shard cursor: a page
    // rendered them, with the cursor its host app gave; null or left out: as
    // without it). Once the subscription is live, everything published
    // under the prefix after it is read over REST (GET /api/notifications
    // ?after=cursor&topic=prefix&kind=all, 1000 a page, at most 20 pages) and
    // applied like live notifications, which keep coming meanwhile (the newer
    // version, or for records without one the newer notification, wins). With
    // {fetch: true} too, this comes instead of the first fetch. A read that
    // fails is tried again after a backoff (4 times; at once given up when it
    // cannot pass, e.g. a 400 for a malformed id); then the collection is
    // fetched ({fetch}), else the client triggers `sync:error` (the Error, then
    // {prefix, collection, store}: both the target) and the page should reload
    // its records.
    // Usage: Herald.sync(records, 'board.record', {since: page.heraldCursor}),
    // Herald.sync(new Map(), 'board.card', {fetch: loadCards}).
    sync: function (store, prefix, options) {
      var client = (options && options.client) || Herald.current;
      if (!client) throw new Error('Herald.sync: call Herald.connect first');
      return client.sync(store, prefix, options);
    },

    // Refresh the page now, as a `<stream>.refresh` notification would (see
    // connect's `refresh`), without waiting: a promise of true once the body is
    // morphed into the page's current one, false when it could not be
    // (`refresh:error`). During a refresh, one more follows it.
    refresh: function (options) {
      var client = (options && options.client) || Herald.current;
      if (!client) throw new Error('Herald.refresh: call Herald.connect first');
      return client.refresh();
    }
  };

  root.Herald = Herald;
})(window);
