/*
 * Browser notifications (the Web Notification API): while the dashboard's
 * tab is hidden, a live notification that is critical, or private to the
 * user (`user` set), also pops up as a notification of the browser. Opt-in,
 * per browser, from the Preferences page.
 *
 * `herald.desktopNotifications` is the switch, shared by both pages: it is
 * kept in this browser's localStorage (a property of the browser, not of the
 * account: another browser of the same user keeps its own) and works only
 * when the browser also allows it (`Notification.permission`). The
 * Preferences page asks for that permission, on the click that turns it on.
 *
 * `herald.DesktopNotifier` follows the dispatcher. What it never shows:
 * the replay after a (re)connect (only what arrives between `replayed` and
 * the next loss of the connection is live), `kind: "data"` envelopes,
 * anything while the tab is visible, anything already handled when it would
 * show (read, archived or snoozed, by another tab or device meanwhile). By the
 * toasts' rules (toast-view.js): a burst is one notification (what arrives
 * within BURST_MS of the one before is gathered, MAX_GATHER_MS at most, and
 * never sooner than a second after the last one shown): news of one row of
 * the feed (the same topic and title, or one run) is that row's title with
 * "×N", news of several rows is one "N new notifications". Several tabs
 * of the same browser show each notification once: the first tab to take
 * the id's Web Lock holds it for a minute and shows it; a tab that finds it
 * taken stays quiet. The lock, kept by the browser itself, is what decides:
 * localStorage is not a mutex between tabs (Chromium hands one tab's write
 * to another renderer asynchronously, so a tab can read a claim made a
 * millisecond earlier as absent). localStorage remembers shown ids for ten
 * minutes behind the lock, for a tab that hears of one late, and is all
 * there is where a browser has no Web Locks; the notification's `tag` is
 * its id, so the browser replaces a duplicate anyway. Clicking one brings its tab forward and opens the item
 * (`?n=<id>`, which the dashboard's router follows).
 *
 * The dashboard starts one by itself (this file is loaded there before
 * pages/dashboard.js); other pages load it for the switch alone.
 */
(function (herald) {
  'use strict';

  var SWITCH_KEY = 'herald.desktop-notifications';
  var CLAIMS_KEY = 'herald.desktop-notifications.shown';
  var LOCK = 'herald.desktop-notifications';
  var GAP_MS = 1000;                 // at most one notification a second
  var BURST_MS = 750;                // news this close together is one burst
  var MAX_GATHER_MS = 3000;          // a long burst shows after this all the same
  var CLAIM_KEPT_MS = 10 * 60 * 1000;  // how long a shown id is remembered
  var CLAIM_HELD_MS = 60 * 1000;     // how long the tab that shows an id holds its lock
  var BODY_MAX = 240;                // characters of the body a notification carries
  var SUMMARY_TITLES = 3;            // titles named in an "N new notifications"

  function storage(action) {
    try { return action(window.localStorage); } catch (error) { return null; }  // storage off or full
  }

  // ---- The switch --------------------------------------------------------------

  herald.desktopNotifications = {
    // Whether this browser has the Notification API on this page at all.
    supported: function () {
      return typeof window.Notification === 'function' && window.isSecureContext !== false;
    },

    // 'granted', 'denied' or 'default' (not asked yet, or the prompt closed); 'unsupported'.
    permission: function () {
      return this.supported() ? window.Notification.permission : 'unsupported';
    },

    // Whether the user turned them on in this browser.
    wanted: function () {
      return storage(function (store) { return store.getItem(SWITCH_KEY); }) === 'on';
    },

    setWanted: function (on) {
      storage(function (store) {
        if (on) store.setItem(SWITCH_KEY, 'on'); else store.removeItem(SWITCH_KEY);
      });
    },

    // Turned on and allowed: notifications will show.
    enabled: function () {
      return this.wanted() && this.permission() === 'granted';
    },

    // Ask the browser (only ever on the user's click); a promise of the permission.
    // Older Safari answers through a callback instead of a promise.
    request: function () {
      var self = this;
      if (!self.supported()) return Promise.resolve('unsupported');
      return new Promise(function (resolve) {
        var asked = window.Notification.requestPermission(resolve);
        if (asked && asked.then) asked.then(resolve, function () { resolve(self.permission()); });
      });
    }
  };

  // ---- The notifier --------------------------------------------------------------

  // Handled since it arrived (the dashboard's collection knows): read, archived, snoozed.
  function handled(n) {
    var collection = herald.notifications, model = collection && collection.get(n.id);
    return Boolean(collection && ((model && model.get('read')) || collection.isHidden(n.id)));
  }

  function clip(text, max) {
    text = String(text || '');
    return text.length > max ? text.slice(0, max - 1) + '…' : text;
  }

  herald.DesktopNotifier = function (options) {
    options = options || {};
    this.user = options.user || '';
    this.settings = options.settings || herald.desktopNotifications;
    this.live = false;       // between `replayed` and the next loss of the connection
    this.pending = [];       // envelopes claimed, waiting for the burst to end
    this.timer = null;
    this.gatheredFrom = null;  // when the burst being gathered began (ms)
    this.lastShown = 0;      // ms
    this.claims = Promise.resolve();  // settles once every claim asked so far is decided
    this.listenTo(herald.dispatcher, 'connected', function () { this.live = false; });
    this.listenTo(herald.dispatcher, 'connection', function (state) {
      if (state !== 'connected') this.live = false;
    });
    this.listenTo(herald.dispatcher, 'replayed', function () { this.live = true; });
    this.listenTo(herald.dispatcher, 'notification', this.receive);
  };

  _.extend(herald.DesktopNotifier.prototype, Backbone.Events, {
    // Whether `envelope` is one to show now. Decided as it arrives, so what the
    // tab and the switch were then is what counts.
    wanted: function (envelope) {
      return this.live && envelope.kind !== 'data' &&
        (envelope.severity === 'critical' || Boolean(envelope.user)) &&
        document.visibilityState === 'hidden' && this.settings.enabled();
    },

    receive: function (envelope) {
      var self = this;
      if (!self.wanted(envelope)) return;
      self.claim(envelope.id).then(function (mine) {
        if (mine) self.queue(envelope);
      });
    },

    // Claim `id` for this tab: a promise of true when no other tab of this browser
    // shows it. The id's Web Lock, taken only if free and held a minute by the tab
    // that shows it, decides (see the file's comment); `remember` keeps it longer.
    claim: function (id) {
      var self = this, name = LOCK + ':' + this.user + ':' + id;
      var decided;
      if (navigator.locks && navigator.locks.request) {
        decided = new Promise(function (resolve) {
          navigator.locks.request(name, {ifAvailable: true}, function (lock) {
            if (!lock) { resolve(false); return null; }  // another tab holds it
            resolve(self.remember(id));
            return new Promise(function (release) { setTimeout(release, CLAIM_HELD_MS); });
          }).catch(function () { resolve(self.remember(id)); });
        });
      } else {
        decided = Promise.resolve(self.remember(id));
      }
      self.claims = Promise.all([self.claims, decided]);
      return decided;
    },

    // Record `id` as shown in this browser's localStorage; whether it was new there.
    remember: function (id) {
      var key = CLAIMS_KEY + ':' + this.user, now = Date.now(), fresh = true;
      storage(function (store) {
        var claims = JSON.parse(store.getItem(key) || '{}');
        claims = _.pick(claims, function (at) { return now - at < CLAIM_KEPT_MS; });
        fresh = !claims[id];
        claims[id] = claims[id] || now;
        store.setItem(key, JSON.stringify(claims));
      });
      return fresh;
    },

    // A promise that settles once every claim asked for so far is decided.
    settled: function () {
      return this.claims.then(function () { return true; });
    },

    // Gather the burst: shown BURST_MS after its last news (MAX_GATHER_MS after its
    // first at most), and never sooner than GAP_MS after the last one shown.
    queue: function (envelope) {
      var now = Date.now();
      this.pending.push(envelope);
      if (this.gatheredFrom === null) this.gatheredFrom = now;
      clearTimeout(this.timer);
      var wait = Math.max(Math.min(BURST_MS, this.gatheredFrom + MAX_GATHER_MS - now), this.lastShown + GAP_MS - now);
      this.timer = setTimeout(_.bind(this.flush, this), Math.max(0, wait));
    },

    flush: function () {
      var batch = _.reject(this.pending, handled);
      this.timer = null;
      this.gatheredFrom = null;
      this.pending = [];
      // Back in the tab meanwhile (or switched off): the feed shows them.
      if (!batch.length || document.visibilityState !== 'hidden' || !this.settings.enabled()) return;
      this.lastShown = Date.now();
      if (_.size(_.groupBy(batch, herald.rowKey)) === 1) this.showOne(_.last(batch), batch.length); else this.showMany(batch);
    },

    // One row's news: its newest, with how many times it came.
    showOne: function (n, count) {
      var self = this;
      // A severity's word comes from feed-item.js's messages (herald.t of a known word).
      var line = (n.user ? herald.t('For you') : n.severity === 'critical' ? herald.t('Critical') :
        herald.t(n.severity || 'info')) + ' · ' + n.topic;
      var shown = self.show(n.title + (count > 1 ? ' ×' + count : ''), {
        body: clip(line + (n.body ? '\n' + n.body : ''), BODY_MAX),
        tag: n.id,
        data: {id: n.id}
      });
      if (shown) shown.onclick = function (event) { self.clicked(event, shown, n.id); };
    },

    showMany: function (batch) {
      var self = this, newest = batch[batch.length - 1];
      var titles = _.map(batch.slice(-SUMMARY_TITLES).reverse(), function (n) { return '• ' + clip(n.title, 80); });
      if (batch.length > SUMMARY_TITLES) titles.push(herald.t('and {n} more', {n: batch.length - SUMMARY_TITLES}));
      var shown = self.show(herald.tn('{n} new notification', '{n} new notifications', batch.length), {
        body: titles.join('\n'),
        tag: 'herald-batch:' + newest.id
      });
      if (shown) shown.onclick = function (event) { self.clicked(event, shown, null); };
    },

    // A Notification, or null where the page may not make one (Chrome on Android
    // wants a service worker for it and throws).
    show: function (title, options) {
      try {
        return new window.Notification(title, options);
      } catch (error) {
        return null;
      }
    },

    // Bring the tab forward and open the item (or, for a summary, go to the feed).
    clicked: function (event, shown, id) {
      if (event && event.preventDefault) event.preventDefault();
      window.focus();
      shown.close();
      if (id) this.open(id); else $('#feed-heading').attr('tabindex', '-1').trigger('focus');
    },

    // The item's URL, as the dashboard's router reads it (the filters kept);
    // followed in place when the router runs, else by loading it.
    open: function (id) {
      var params = new URLSearchParams(window.location.search);
      params.set('n', id);
      var query = '?' + params.toString();
      if (Backbone.History.started) Backbone.history.navigate(query, {trigger: true});
      else window.location.assign(window.location.pathname + query);
    },

    stop: function () {
      clearTimeout(this.timer);
      this.stopListening();
    }
  });

  // The dashboard starts one, before its collections and views (so it hears
  // the first connect); other pages use the switch only.
  $(function () {
    if (!document.body.classList.contains('dashboard') || !herald.dispatcher) return;
    var config = herald.pageConfig ? herald.pageConfig() : {};
    herald.desktopNotifier = new herald.DesktopNotifier({user: config.user});
  });
})(window.herald = window.herald || {});
