/*
 * Herald's browser client: live notifications for any page, on any origin.
 *
 *     var herald = Herald.connect({url: 'https://herald.example.com', getToken: fetchToken});
 *     herald.on('notification', function (n) { console.log(n.title); });
 *     herald.subscribe(['ops']);
 *     Herald.sync(records, 'board.record', {fetch: true});  // a Backbone collection, kept live
 *
 * A page that renders its records into the HTML can render with them the
 * Herald stream id they are as of (the host app's outbox knows it), and then
 * `Herald.sync(records, 'board.record', {since: cursor})`: once subscribed,
 * the client reads what was published under the prefix after that id over
 * REST, so a change made between the render and the subscription is not lost.
 *
 * One file, no build step, served by Herald at /client/herald.js with
 * socket.io-client beside it at /client/socket.io.js. When Backbone is on
 * the page the client's dispatcher is a `Backbone.Events` (views can
 * `listenTo` it); otherwise a minimal emitter with `on`, `once`, `off` and
 * `trigger`.
 *
 * Delivery. Every notification is triggered once, in id order, as
 * `notification` and `notification:<topic>`. The client keeps a cursor, the
 * newest notification id it has seen, and reconnects with it as `last_id`,
 * so the server replays exactly what was missed; anything at or below the
 * cursor is a duplicate and is dropped. After the replay the server says how
 * it went (`replayed`); when it could not recover everything (history no
 * longer reaches back that far, or the stream was recreated since) the
 * client starts its cursor again, passes `reset` on and, with the `snapshot`
 * or `load` option, reloads over REST.
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
 * {fetch: true} to fall back on: the Error, then {prefix, collection})
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

  // ---- Ids and the cursor ----------------------------------------------------

  // Compare two notification ids ("<ms>-<seq>", no leading zeros): -1, 0 or 1.
  // Compared as digit strings, so ids past 2^53 still compare exactly.
  function compareIds(a, b) {
    var x = String(a).split('-'), y = String(b).split('-');
    for (var i = 0; i < 2; i++) {
      var p = x[i] || '0', q = y[i] || '0';
      if (p.length !== q.length) return p.length < q.length ? -1 : 1;
      if (p !== q) return p < q ? -1 : 1;
    }
    return 0;
  }

  // The newest notification id seen; kept in localStorage under `key`, when given.
  function Cursor(key, start) {
    this.key = key;
    this.value = null;
    if (key) this.advance(this.stored());  // the remembered cursor first: `start` moves it forward only
    this.advance(start);
  }

  Cursor.prototype.stored = function () {
    try { return root.localStorage.getItem(this.key); } catch (e) { return null; }
  };

  // Move forward to `id`; never back. True when it moved.
  Cursor.prototype.advance = function (id) {
    if (!id || (this.value && compareIds(id, this.value) <= 0)) return false;
    this.value = id;
    if (this.key) {
      try { root.localStorage.setItem(this.key, id); } catch (e) { /* private mode, full */ }
    }
    return true;
  };

  // Start again from `id` (a recreated stream's ids may be older than ours).
  Cursor.prototype.restart = function (id) {
    this.value = null;
    if (this.key) {
      try { root.localStorage.removeItem(this.key); } catch (e) { /* private mode */ }
    }
    this.advance(id);
  };

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
    var io = options.io || root.io;
    if (typeof io !== 'function') {
      throw new Error('Herald.connect: socket.io-client is not loaded (load /client/socket.io.js first)');
    }
    self.options = options;
    self.io = io;
    self.base = baseUrl(options.url);
    self.dispatcher = options.dispatcher || makeDispatcher();
    self.tokens = new TokenSource(options);
    self.user = options.user || self.tokens.claims.sub || null;
    var key = options.remember && self.user ? 'herald.lastId.' + self.user : null;
    self.cursor = new Cursor(key, options.lastId);
    self.topics = (options.topics || []).slice();
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

  Client.prototype._open = function () {
    var self = this;
    if (self.closed) return;
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
      if (!self.closed && !self.socket.connected) self.socket.connect();
    }, delay);
    self.dispatcher.trigger('retrying', {at: self.retryAt, delay: delay, reason: reason || null});
  };

  // Try to connect now, not when the waiting retry is due ("Retry now"). Once
  // the client has given up (refused for good), this tries again too. The
  // backoff is not reset: if this fails, the next wait is the longer one.
  Client.prototype.reconnect = function () {
    if (this.closed || !this.socket || this.socket.connected) return false;
    clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.retryAt = null;
    this.retriedAuth = false;
    this._state('reconnecting');
    this.socket.connect();
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

  Client.prototype._pump = function (envelope) {
    if (!this.cursor.advance(envelope.id)) return;  // seen already
    this.dispatcher.trigger('notification', envelope);
    this.dispatcher.trigger('notification:' + envelope.topic, envelope);
  };

  Client.prototype._reset = function () {
    var self = this;
    self.dispatcher.trigger('reset');
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

  // Mark read: {ids: [...]} and/or {upto: id}; every tab of the user hears `read`.
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
    if (this.socket) this.socket.disconnect();
  };

  // ---- Live Backbone collections ----------------------------------------------------

  var CATCH_UP_LIMIT = 1000;   // notifications per page of the catch-up read (the server's most)
  var CATCH_UP_PAGES = 20;     // at most this many pages (20,000 changes): past that, fall back
  var CATCH_UP_RETRIES = 4;    // a failed catch-up read is tried again this many times...
  var catchUpBackoff = function () { return new Backoff(1000, 8000); };  // ...after these delays (ms)

  // Keep `collection` in step with `<prefix>.created|updated|deleted`
  // notifications whose `data` is the record (see Herald.sync).
  Client.prototype.sync = function (collection, prefix, options) {
    options = options || {};
    var self = this;
    var versionOf = options.version || 'version';
    var idAttribute = (collection.model && collection.model.prototype.idAttribute) || 'id';
    var since = options.since == null || options.since === '' ? null : String(options.since);
    var deleted = {};  // id -> version at deletion, so a late stale update cannot revive it
    var held = null;   // notifications that came while the collection was being fetched
    // While the catch-up read runs: record id -> id of the newest notification
    // applied to it (live or caught up), so that the catch-up never applies a
    // change older than one already applied, even to records without versions.
    var touched = null;
    var stopped = false, retryTimer = null, wake = null;  // the catch-up's wait to read again

    function stale(record, previous, strictly) {
      var incoming = record[versionOf];
      if (incoming == null || previous == null) return false;
      return strictly ? incoming < previous : incoming <= previous;
    }

    function apply(action, record, at) {
      var id = record[idAttribute];
      if (id == null) return;
      if (touched && at) {
        if (touched[id] && compareIds(at, touched[id]) <= 0) return;  // older than one applied
        touched[id] = at;
      }
      var existing = collection.get(id);
      var current = existing ? existing.get(versionOf) : deleted[id];
      if (action === 'deleted') {
        if (stale(record, current, true)) return;
        deleted[id] = record[versionOf];
        if (existing) collection.remove(existing);
        return;
      }
      if (stale(record, current, false)) return;
      delete deleted[id];
      if (existing) existing.set(record); else collection.add(record);
    }

    function receive(envelope) {
      var topic = envelope.topic;
      if (typeof topic !== 'string' || topic.slice(0, prefix.length + 1) !== prefix + '.') return;
      var action = topic.slice(prefix.length + 1);
      var record = envelope.data;
      if (!SYNC_ACTIONS[action] || !record || typeof record !== 'object') return;
      if (held) held.push([action, record, envelope.id]); else apply(action, record, envelope.id);
    }

    // While the collection fetches, hold what arrives; apply it after, where
    // the versions tell what the fetch already had.
    function fetching(target) {
      if (target === collection && !held) held = [];
    }
    function fetched(target) {
      if (target !== collection || !held) return;
      var waiting = held;
      held = null;
      waiting.forEach(function (item) { apply(item[0], item[1], item[2]); });
    }

    function refetch() {
      if (typeof collection.fetch === 'function') collection.fetch();
    }

    // The catch-up: what was published under the prefix after `since` (the
    // page's records are as of that id), read over REST page by page, oldest
    // first, and applied like live notifications. Live ones that come
    // meanwhile are applied as they come; versions (and `touched`) keep the
    // newer of the two. A failure that may pass (no answer, 5xx, 429) is read
    // again after a backoff, a few times; then, or at once for any other, the
    // collection is fetched whole ({fetch: true}) or `sync:error` is triggered.
    function catchUp() {
      var backoff = catchUpBackoff(), pages = 0;
      touched = {};
      function read(after) {
        return self.history({after: after, topic: prefix, kind: 'all', limit: CATCH_UP_LIMIT})
          .then(function (reply) {
            if (stopped) return;
            var list = (reply && reply.notifications) || [];
            list.forEach(receive);
            pages++;
            backoff.reset();
            var next = reply && reply.last_id;
            if (list.length < CATCH_UP_LIMIT || !next || compareIds(next, after) <= 0) return;
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
        error.prefix = prefix;
        self.dispatcher.trigger('sync:error', error, {prefix: prefix, collection: collection});
      });
    }

    // The prefix joins the topics subscribed on every connect; once the first
    // subscription covering it is acknowledged, changes flow, and the
    // collection may be caught up (`since`) or fetched without missing any.
    var live = false, markReady;
    var ready = new Promise(function (resolve) { markReady = resolve; });
    function subscribed(topics) {
      if (live || !covers(topics, prefix)) return;
      live = true;
      if (since) return catchUp().then(markReady, markReady);  // (a listener of ours threw)
      if (options.fetch) refetch();
      markReady();
    }

    self.dispatcher.on('notification', receive);
    self.dispatcher.on('subscriptions', subscribed);
    collection.on('request', fetching);
    collection.on('sync error', fetched);
    if (options.fetch) self.dispatcher.on('reset', refetch);  // replay could not cover the gap
    if (self.topics.indexOf(prefix) < 0) self.topics.push(prefix);
    if (self.state === 'connected') self.subscribe([prefix]).catch(function () {});

    return {
      ready: ready,
      stop: function () {
        stopped = true;
        clearTimeout(retryTimer);
        if (wake) wake();  // a catch-up waiting to read again ends now (and `ready` with it)
        self.dispatcher.off('notification', receive);
        self.dispatcher.off('subscriptions', subscribed);
        self.dispatcher.off('reset', refetch);
        collection.off('request', fetching);
        collection.off('sync error', fetched);
      }
    };
  };

  // ---- The public face ---------------------------------------------------------------

  var Herald = {
    VERSION: '1',
    Client: Client,
    compareIds: compareIds,

    // Connect to Herald. Options: url (Herald's address; this page's origin by
    // default), token or getToken (a function returning a token or a promise of
    // one), user (for the stored cursor; a JWT's `sub` by default), topics (to
    // subscribe to on every connect), snapshot (N: load the newest N over REST
    // first, and again after a reset), readState (fetch it on every connect),
    // remember (keep the cursor in localStorage), lastId, dispatcher, transports,
    // reconnectionDelay and reconnectionDelayMax (ms: the first and the widest
    // window a reconnect's delay is drawn from; 500 and 5000).
    connect: function (options) {
      var client = new Client(options);
      Herald.current = client;
      return client;
    },

    // Options for connect() from the page: a page rendered with the Python
    // client's Flask extension (`{{ herald_scripts() }}`) carries Herald's URL,
    // a token for its user and where to renew it in a JSON block; `extra`
    // options are added (topics, snapshot, ...).
    pageOptions: function (extra, elementId) {
      var element = root.document.getElementById(elementId || 'herald-connect');
      if (!element) {
        throw new Error('Herald.pageOptions: this page has no #herald-connect block ' +
                        '(render {{ herald_scripts() }} in its template)');
      }
      var settings = JSON.parse(element.textContent);
      var options = {url: settings.url, token: settings.token, user: settings.user};
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

    // Keep a Backbone collection live: `<prefix>.created`, `.updated` and
    // `.deleted` notifications whose `data` is a record (with its id, and
    // optionally a `version`) add, update or remove it, ignoring stale versions.
    // Subscribes the user to `prefix`; with {fetch: true} the collection is
    // fetched once that subscription is live (and again after a reset), and
    // what arrives during any fetch is applied after it. Returns {ready, stop}:
    // `ready` resolves once the subscription is live (and the catch-up done).
    //
    // {since: id}: the collection holds the records as of that notification id
    // (a page rendered them, with the cursor its host app gave; null or left
    // out: as without it). Once the subscription is live, everything published
    // under the prefix after it is read over REST (GET /api/notifications
    // ?after=id&topic=prefix&kind=all, 1000 a page, at most 20 pages) and
    // applied like live notifications, which keep coming meanwhile (the newer
    // version, or for records without one the newer notification, wins). With
    // {fetch: true} too, this comes instead of the first fetch. A read that
    // fails is tried again after a backoff (4 times; at once given up when it
    // cannot pass, e.g. a 400 for a malformed id); then the collection is
    // fetched ({fetch: true}), else the client triggers `sync:error` (the
    // Error, then {prefix, collection}) and the page should reload its records.
    // Usage: Herald.sync(records, 'board.record', {since: page.heraldCursor}).
    sync: function (collection, prefix, options) {
      var client = (options && options.client) || Herald.current;
      if (!client) throw new Error('Herald.sync: call Herald.connect first');
      return client.sync(collection, prefix, options);
    }
  };

  root.Herald = Herald;
})(window);
