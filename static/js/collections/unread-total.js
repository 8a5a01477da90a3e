/*
 * The true number of unread rows, for every counter of the inbox (the page's
 * title, the header's badge, the tabs' counts): the same number everywhere.
 *
 * Everything of the view loaded (no `nextBefore`): the local rule is exact
 * (read-state.js, unreadCounts) and the server is not asked. Older pages not
 * loaded: the server counts the rows (GET /api/notification-state/matching with
 * the view's filters, unread=1, rows=1, tab inbox and foryou: docs/contract.md),
 * and what changed here since its answer (a read change, a new arrival) is
 * added at once: server + (local now - local at the answer). It is asked again
 * after changes settle (DEBOUNCE_MS; "100+" until its first answer for the view; one ask at a time, a change meanwhile asks
 * once more after it) and after the server's own `read`/`state` events, which
 * follow its saving. An ask that fails (Redis away) keeps the last number.
 *
 *   var total = collection.unreadTotal(keyOf);   // one per collection
 *   total.counts();   // {inbox, foryou, more: {inbox, foryou}}: over the server's bound
 *   total.on('change', render);
 *   herald.unreadText(5000, true);   // "5,000+"
 */
(function (herald) {
  'use strict';

  var PATH = '/api/notification-state/matching';
  var DEBOUNCE_MS = 300;
  var TABS = ['inbox', 'foryou'];

  herald.unreadText = function (n, more) {
    return n.toLocaleString(herald.locale) + (more ? '+' : '');
  };

  herald.UnreadTotal = function (collection, keyOf) {
    this.collection = collection;
    this.keyOf = keyOf;
    this.server = null;  // {inbox, foryou, more, query}: the last answer, for `query`
    this.base = null;    // the local counts when it came
    this.timer = null;
    this.asking = false;
    this.again = false;
    this.listenTo(collection, 'loaded add remove reset change:read', this.schedule);
    this.listenTo(herald.dispatcher, 'read state connected', this.schedule);
  };

  _.extend(herald.UnreadTotal.prototype, Backbone.Events, {
    query: function () {
      return $.param(_.omit(this.collection.query({unread: 1, rows: 1}), 'limit'));
    },

    // The server's answer, when it is for the view shown and older pages are not loaded.
    current: function () {
      var c = this.collection;
      return c.nextBefore && this.server && this.server.query === this.query() ? this.server : null;
    },

    counts: function () {
      var local = this.collection.unreadCounts(this.keyOf), server = this.current(), base = this.base;
      if (!server) {  // older pages unknown until the server answers: "at least" ("100+")
        var unsure = Boolean(this.collection.nextBefore);
        return {inbox: local.inbox, foryou: local.foryou, more: {inbox: unsure, foryou: unsure}};
      }
      return {
        inbox: Math.max(local.inbox, server.inbox + local.inbox - base.inbox),
        foryou: Math.max(local.foryou, server.foryou + local.foryou - base.foryou),
        more: server.more
      };
    },

    schedule: function () {
      var self = this;
      if (self.asking) { self.again = true; return; }
      clearTimeout(self.timer);
      self.timer = setTimeout(function () { self.ask(); }, DEBOUNCE_MS);
    },

    ask: function () {
      var self = this, c = self.collection;
      self.timer = null;
      if (!c.loaded || !c.nextBefore) return;  // all loaded: the local rule is exact
      var query = self.query();
      self.asking = true;
      Promise.all(_.map(TABS, function (tab) {
        return herald.client.get(PATH + '?' + query + '&tab=' + tab);
      })).then(function (replies) {
        if (query !== self.query()) return;  // another view meanwhile
        self.server = {inbox: replies[0].count, foryou: replies[1].count,
                       more: {inbox: replies[0].more, foryou: replies[1].more}, query: query};
        self.base = c.unreadCounts(self.keyOf);
        self.trigger('change');
      }, function () { /* Redis away: the last number stays; the next change asks again */ })
        .then(function () {
          self.asking = false;
          if (self.again) { self.again = false; self.schedule(); }
        });
    }
  });
})(window.herald = window.herald || {});
