/*
 * The notifications the feed shows: one view of the user's feed (the inbox,
 * "Archived" or "Snoozed", maybe filtered), newest first, and the user's
 * read, archive and snooze state.
 *
 * A view is loaded over REST (`load`, then `loadMore` for older pages: the
 * server filters and searches, within the retained history). Live
 * notifications from the dispatcher join it when they match the same filter,
 * checked here as the server checks it. A notification already held (same id)
 * is ignored, so a replay, a reload or a duplicate delivery never shows twice.
 *
 * State is the server's and shared by all of the user's tabs: read state
 * (`read` events: everything up to `upto`, plus `ids` above it, minus
 * `unread` exceptions below it) and archive/snooze state (`state` events).
 * Acting here asks the server; the server tells every tab, this one included.
 */
(function (herald) {
  'use strict';

  var PAGE = 100;          // notifications per REST page
  var RECENT = 200;        // live notifications remembered across a reload of the view
  var KEEP = 500;          // notifications held at least, live ones included
  var TRIM = 50;           // how many more before the oldest are let go
  var FILTER_KEYS = ['view', 'q', 'severity', 'topic', 'unread'];
  var FETCH_EACH_MOST = 20;  // notifications joining the view fetched one by one; more: a reload

  // The filter a query string (or an object of strings) asks for, normalised.
  herald.parseFilter = function (params) {
    var get = function (key) { return (params[key] || '').trim(); };
    var view = get('view'), tab = get('tab');
    return {
      view: view === 'archived' || view === 'snoozed' ? view : 'feed',
      tab: tab === 'foryou' || tab === 'activity' ? tab : 'inbox',
      q: get('q'),
      severity: get('severity'),
      topic: get('topic'),
      unread: get('unread') === '1' ? '1' : ''
    };
  };

  herald.Notifications = Backbone.Collection.extend({
    model: herald.Notification,

    initialize: function () {
      this.criteria = herald.parseFilter({});
      this.upto = null;
      this.readIds = {};
      this.unreadIds = {};
      this.mine = {};         // id -> {pending, version}: this tab's own read changes
      this.archived = {};
      this.snoozed = {};      // id -> until (ms)
      this.recent = [];        // the last live envelopes, newest last
      this.liveFrom = null;    // the stream's end at the first load: what is past it is news
      this.announced = [];     // the ids announced as news (`arrived`), the newest last
      this.mutes = [];         // [[prefix, muted]], the most specific first (preferences)
      this.nextBefore = null;  // where the next older page starts; null: none
      this.loading = null;
      this.listenTo(herald.dispatcher, 'notification', this.receiveLive);
      this.listenTo(herald.dispatcher, 'read', this.applyRead);
      this.listenTo(herald.dispatcher, 'state', this.applyState);
      // (After a `reset` the client calls the page's load again: see pages/dashboard.js.)
      // Back after a disconnect: state changes announced meanwhile were missed.
      this.connects = 0;
      this.listenTo(herald.dispatcher, 'connected', function () {
        if (this.connects++) this.resync();
      });
    },

    // Newest (largest id) first.
    comparator: function (a, b) {
      return herald.compareIds(b.id, a.id);
    },

    // ---- Loading a view ------------------------------------------------------

    query: function (extra) {
      var f = this.criteria, params = {limit: PAGE};
      _.each(FILTER_KEYS, function (key) { if (f[key] && !(key === 'view' && f[key] === 'feed')) params[key] = f[key]; });
      return _.extend(params, extra);
    },

    // Load the view `filter` asks for (the newest page of it); a promise of the reply.
    load: function (filter) {
      var self = this;
      self.criteria = herald.parseFilter(filter || self.criteria);
      self.loaded = false;
      self.nextBefore = null;  // the view's pages are the new load's, once it is in
      self.trigger('loading');
      var loading = self.loading = Promise.all([
        herald.client.history(self.query()),
        herald.client.notificationState(),
        herald.client.readState(),
        herald.client.get('/api/preferences').catch(function () { return null; })
      ]).then(function (replies) {
        if (loading !== self.loading) return replies[0];  // a newer load won
        self.setState(replies[1]);
        self.setRead(replies[2]);
        if (replies[3]) self.setMutes(replies[3].rules || []);
        self.loaded = true;
        self.nextBefore = replies[0].next_before;
        // With what arrived live past where the read ended, in the same reset: a
        // moment without them would drop them from the toast's news, for good.
        var end = replies[0].last_id, page = replies[0].notifications;
        var since = _.filter(_.uniq(self.recent, false, 'id'), function (envelope) {
          return !end || herald.isPast(envelope.id, end);
        });
        self.reset(_.map(page.concat(_.filter(since, self.matches, self)), self.withState, self));
        self.loadedCount = page.length;
        if (self.liveFrom === null) self.liveFrom = end || '0-0';
        _.each(since, function (envelope) { self.announce(self.get(envelope.id)); });
        self.trigger('loaded', replies[0]);
        return replies[0];
      });
      loading.catch(function (error) { self.trigger('load:error', error); });
      return loading;
    },

    // The next page of older notifications of this view.
    loadMore: function () {
      var self = this, loading = self.loading;
      if (!self.nextBefore) return Promise.resolve(null);
      return herald.client.history(self.query({before: self.nextBefore})).then(function (reply) {
        if (loading !== self.loading) return null;  // a newer load began: a page of another view
        self.nextBefore = reply.next_before;
        self.add(_.map(reply.notifications, self.withState, self), {older: true});
        self.loadedCount = self.length;
        self.trigger('loaded', reply);
        return reply;
      });
    },

    // ---- Which notifications belong in the view ---------------------------------

    withState: function (envelope) {
      return _.extend({}, envelope, {read: this.isRead(envelope.id)});
    },

    isHidden: function (id) {
      var until = this.snoozed[id];
      return Boolean(this.archived[id]) || (until !== undefined && until > Date.now());
    },

    // The user's mute rules (preferences' "mute" mode), the most specific first,
    // as the server applies them (app/users/preferences.py mute_rules).
    setMutes: function (rules) {
      var mutes = _.map(rules, function (rule) { return [rule.topic, rule.mode === 'mute']; });
      this.mutes = _.some(mutes, function (m) { return m[1]; }) ?
        _.sortBy(mutes, function (m) { return (m[0] === '*' ? 1e6 : 0) - m[0].length; }) : [];
    },

    isMuted: function (topic) {
      var rule = _.find(this.mutes, function (m) { return herald.covers([m[0]], topic); });
      return Boolean(rule && rule[1]);
    },

    // Whether the current filter takes `envelope` (as the server's filter would).
    matches: function (envelope) {
      var f = this.criteria;
      if (envelope.kind === 'data') return false;  // a record changed: for programs, not people
      if (f.view === 'feed' && (this.isHidden(envelope.id) || this.isMuted(envelope.topic))) return false;
      if (f.view === 'archived' && !this.archived[envelope.id]) return false;
      if (f.view === 'snoozed' && this.snoozed[envelope.id] === undefined) return false;
      if (f.unread && this.isRead(envelope.id)) return false;
      if (f.severity && !_.contains(f.severity.split(','), envelope.severity)) return false;
      if (f.topic && !herald.covers([f.topic], envelope.topic)) return false;
      if (f.q) {
        var text = ((envelope.title || '') + '\n' + (envelope.body || '')).toLowerCase();
        if (text.indexOf(f.q.toLowerCase()) < 0) return false;
      }
      return true;
    },

    receiveLive: function (envelope) {
      this.recent.push(envelope);
      if (this.recent.length > RECENT) this.recent.shift();
      this.receive(envelope, {live: true});
      this.trim();
    },

    // A page left open for days must not grow without end: past `kept` (what the
    // user loaded, at least KEEP), the oldest go, fifty at a time, and "load more"
    // starts from the oldest still held.
    trim: function () {
      var kept = Math.max(KEEP, this.loadedCount || 0);
      if (this.length <= kept + TRIM) return;
      this.remove(this.last(this.length - kept), {trimmed: true});
      this.nextBefore = this.last().id;
      this.trigger('loaded', {});
    },

    // Add one envelope if the view takes it and it is not held already, in its
    // place: found by bisection, so Backbone does not sort the whole view again
    // for each one (a replay brings hundreds, nearly all of them newest).
    //
    // One that came over the socket (`live`) is also news, `arrived`, once: for
    // the toasts and the screen reader. Held already counts too, since a view
    // loaded over REST may have read it before the socket brought it; the
    // history read with the page (up to `liveFrom`) is not news, and a woken
    // snooze always is.
    receive: function (envelope, options) {
      var held = this.get(envelope.id);
      if (!held && !this.matches(envelope)) return;
      if (!held) this.add(this.withState(envelope), _.extend({at: this.placeOf(envelope.id)}, options));
      if (options && options.live) this.announce(this.get(envelope.id), options.woke);
    },

    announce: function (model, woke) {
      if (!model || this.liveFrom === null) return;  // before the first load: it re-receives them
      if (!woke) {
        if (!herald.isPast(model.id, this.liveFrom) || _.contains(this.announced, model.id)) return;
        this.announced.push(model.id);
        if (this.announced.length > RECENT) this.announced.shift();
      }
      this.trigger('arrived', model);
    },

    // The index a notification with this id takes, newest first.
    placeOf: function (id) {
      var models = this.models;
      return herald.placeNewestFirst(models.length, function (i) { return models[i].id; }, id);
    },

    // ---- Archive and snooze ---------------------------------------------------------

    setState: function (state) {
      var self = this;
      self.archived = {};
      self.snoozed = {};
      _.each(state.archived || [], function (id) { self.archived[id] = true; });
      _.each(state.snoozed || {}, function (until, id) { self.snoozed[id] = until; });
    },

    // A change from the server ({archived, unarchived, snoozed, unsnoozed, woke}):
    // notifications leave the view or join it as the filter now says.
    applyState: function (change) {
      var self = this, touched = [];
      _.each(change.archived || [], function (id) { self.archived[id] = true; touched.push(id); });
      _.each(change.unarchived || [], function (id) { delete self.archived[id]; touched.push(id); });
      _.each(change.snoozed || {}, function (until, id) { self.snoozed[id] = until; touched.push(id); });
      _.each(change.unsnoozed || [], function (id) { delete self.snoozed[id]; touched.push(id); });
      // Many not held (a bulk action by filter, or its Undo: thousands): the view is
      // read again, once, rather than each fetched by itself.
      var missing = _.filter(_.uniq(touched), function (id) { return !self.get(id); });
      if (missing.length > FETCH_EACH_MOST) {
        self.reloadSoon = self.reloadSoon || _.debounce(function () { self.load(self.criteria); }, 300);
        self.reloadSoon();
      }
      _.each(_.uniq(touched), function (id) {
        var model = self.get(id);
        if (model && !self.matches(model.toJSON())) {
          self.remove(model);
        } else if (!model && missing.length <= FETCH_EACH_MOST) {
          // It may belong in this view now: fetch it (gone from history: nothing to show).
          herald.client.get('/api/notifications/' + encodeURIComponent(id)).then(function (envelope) {
            var woke = _.contains(change.woke || [], id);
            self.receive(envelope, {live: woke, woke: woke});
          }, function () { /* past the retained history, or not the user's */ });
        }
      });
      if (change.woke) self.trigger('woke', change.woke);
    },

    // Fetch archive and snooze state again and apply what changed (after a reconnect).
    resync: function () {
      var self = this;
      return herald.client.notificationState().then(function (state) {
        var archived = state.archived || [], snoozed = state.snoozed || {};
        self.applyState({
          archived: _.difference(archived, _.keys(self.archived)),
          unarchived: _.difference(_.keys(self.archived), archived),
          snoozed: _.pick(snoozed, function (until, id) { return self.snoozed[id] !== until; }),
          unsnoozed: _.difference(_.keys(self.snoozed), _.keys(snoozed))
        });
      }, function () { /* the next reconnect tries again */ });
    },

    archive: function (models, archived) {
      var ids = _.pluck(models, 'id');
      var request = archived === false ? herald.client.unarchive(ids) : herald.client.archive(ids);
      return request;  // a failure: told by the client (`action:error`), shown by the caller
    },

    // Snooze or wake `models` in one request (a bulk action, or an Undo).
    snooze: function (models, until) {
      var ids = _.pluck(models, 'id');
      // A failure is told to the page by the client (`action:error`), shown by the caller.
      return herald.client.send('/api/notification-state', {snooze: {ids: ids, until: until}});
    },

    unsnooze: function (models) {
      var ids = _.pluck(models, 'id');
      return herald.client.send('/api/notification-state', {unsnooze: ids});
    },

    // Mute `topic`: a "mute" rule in the user's preferences (reversible there);
    // what is held of it leaves the inbox at once.
    mute: function (topic) {
      var self = this;
      return herald.client.get('/api/preferences').then(function (prefs) {
        var rules = _.reject(prefs.rules || [], function (r) { return r.topic === topic; });
        rules.push({topic: topic, mode: 'mute'});
        return herald.client.send('/api/preferences', _.extend({}, prefs, {rules: rules}), 'PUT');
      }).then(function (prefs) {
        self.setMutes(prefs.rules || []);
        if (self.criteria.view === 'feed') {
          self.remove(self.filter(function (m) { return self.isMuted(m.get('topic')); }));
        }
        return prefs;
      });
    },

    unmute: function (topic) {
      var self = this;
      return herald.client.get('/api/preferences').then(function (prefs) {
        var rules = _.reject(prefs.rules || [], function (r) { return r.topic === topic && r.mode === 'mute'; });
        return herald.client.send('/api/preferences', _.extend({}, prefs, {rules: rules}), 'PUT');
      }).then(function (prefs) {
        self.setMutes(prefs.rules || []);
        return self.load(self.criteria);
      });
    }
  });
})(window.herald = window.herald || {});
