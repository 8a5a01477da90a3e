/*
 * The read state of herald.Notifications (collections/notifications.js), mixed
 * into it: the server's state, shared by all of the user's tabs (`read` events:
 * everything up to `upto`, plus `ids` above it, minus `unread` exceptions below
 * it), and this tab's own changes, applied at once and sent to the server.
 */
(function (herald) {
  'use strict';

  herald.ReadState = {
    isRead: function (id) {
      if (this.unreadIds[id]) return false;
      return Boolean(this.readIds[id]) || (this.upto !== null && herald.compareIds(id, this.upto) <= 0);
    },

    // Shown to the user (the `seen` watermark): the badge counts only what is not.
    isSeen: function (id) {
      return this.seen !== null && this.seen !== undefined && herald.compareIds(id, this.seen) <= 0;
    },

    // Everything up to `id` was shown: tell the server (every tab follows), at most
    // once a second, and only forward.
    markSeen: function (id) {
      var self = this;
      if (!id || self.isSeen(id)) return;
      self.seen = id;  // here at once (no walk over the models: seeing changes no read flag)
      self.trigger('seen', id);
      self.seenPending = id;
      if (self.seenTimer) return;
      self.seenTimer = setTimeout(function () {
        var upto = self.seenPending;
        self.seenTimer = null;
        herald.client.markRead({seen: upto}).catch(function () { /* the next one says it again */ });
      }, 1000);
    },

    setRead: function (state) {
      this.upto = null;
      this.seen = null;
      this.readIds = {};
      this.unreadIds = {};
      this.applyRead(state);
    },

    // The server's read state, whole or a change: {upto, ids, unread, version}, or
    // this tab's own change (no version: it is the newest there is).
    //
    // What the server says about an id this tab has changed itself is older
    // than that change while the change awaits its answer, or when its version
    // is lower than the one the answer carried: left alone. (The echo of an
    // earlier change can arrive after a later one's answer: it once flipped an
    // item back to read for a moment, and redrew it under the keyboard focus.)
    applyRead: function (change) {
      var self = this, mine = self.mine, version = change.version;
      function stale(id) {
        var own = version !== undefined && mine[id];
        return Boolean(own) && (own.pending > 0 || own.version > version);
      }
      if (change.upto && (self.upto === null || herald.compareIds(change.upto, self.upto) > 0)) {
        self.upto = change.upto;
        // Marking all read up to a point ends the unread exceptions below it.
        _.each(_.keys(self.unreadIds), function (id) {
          if (herald.compareIds(id, self.upto) <= 0 && !stale(id)) delete self.unreadIds[id];
        });
      }
      if (change.seen && !self.isSeen(change.seen)) {
        self.seen = change.seen;
        self.trigger('seen', self.seen);
      }
      _.each(change.ids || [], function (id) {
        if (!stale(id)) { self.readIds[id] = true; delete self.unreadIds[id]; }
      });
      _.each(change.unread || [], function (id) {
        if (!stale(id)) { self.unreadIds[id] = true; delete self.readIds[id]; }
      });
      self.each(function (model) { model.set('read', self.isRead(model.id)); });
    },

    // Unread, the one meaning every counter shows (the page's title, the header's
    // badge, the tabs): the rows (groups of notifications, `keyOf` gives a model's
    // group: feed-view.js's `key`) with an unread notification, per tab. Machine
    // chatter (Activity) is never counted as unread (docs/contract.md, "Inbox"), so
    // there is no Activity count. Seen is apart: it only marks rows, counts nothing.
    unreadCounts: function (keyOf) {
      // One pass, a few flags a row (once a frame while notifications arrive, over up
      // to KEEP of them: notifications.js).
      var rows = {}, counts = {inbox: 0, foryou: 0};
      this.each(function (model) {
        var key = keyOf(model), row = rows[key] || (rows[key] = {unread: false, chatter: true, mine: false});
        if (!model.get('read')) row.unread = true;
        if (row.chatter && !herald.isActivity(model.attributes)) row.chatter = false;
        if (model.get('user')) row.mine = true;
      });
      _.each(rows, function (row) {
        if (!row.unread || row.chatter) return;
        counts.inbox += 1;
        if (row.mine) counts.foryou += 1;
      });
      return counts;
    },

    // The true number past the loaded pages, by this rule (unread-total.js): one
    // for the collection, so that every counter shows the same.
    unreadTotal: function (keyOf) {
      return this.total || (this.total = new herald.UnreadTotal(this, keyOf));
    },

    setReadFor: function (models, read) {
      // Redis known away: refused at once, never shown read and then put back.
      var refused = herald.unsaved && herald.unsaved();
      if (refused) return Promise.reject(refused);
      var self = this, ids = _.pluck(models, 'id'), mine = this.mine;
      var change = read ? {ids: ids} : {unread: ids};
      _.each(ids, function (id) {
        var own = mine[id] || (mine[id] = {pending: 0, version: 0});
        own.pending += 1;
      });
      // Done when answered: from then on, what the server says newer than the answer counts.
      function answered(version) {
        _.each(ids, function (id) {
          mine[id].pending -= 1;
          if (version > mine[id].version) mine[id].version = version;
        });
      }
      this.applyRead(change);  // at once here; the server's echo changes nothing more
      return herald.client.markRead(change).then(function (ack) {
        answered(ack.version || 0);
      }, function (error) {
        // Not saved: put it back as it was, visibly (the client has told the page:
        // `action:error`; the feed shows it beside the row, with a Retry).
        answered(0);
        self.applyRead(read ? {unread: ids} : {ids: ids});
        throw error;
      });
    },

    markRead: function (model) {
      if (model.get('read')) return Promise.resolve();
      return this.setReadFor([model], true).catch(function () { /* shown by the feed */ });
    },

    // Mark `models` read (or unread), at most 500 ids a request (the server's bound);
    // a promise of all the answers.
    setReadInBatches: function (models, read) {
      var sent = [];
      for (var i = 0; i < models.length; i += 500) sent.push(this.setReadFor(models.slice(i, i + 500), read));
      return Promise.all(sent);
    }
  };

  _.extend(herald.Notifications.prototype, herald.ReadState);
})(window.herald = window.herald || {});
