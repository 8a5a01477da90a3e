/*
 * The feed's notifications, newest first, at most `limit` of them, and the
 * user's read state.
 *
 * Fed by the dispatcher (live notifications, and REST snapshots); a
 * notification already held (same id) is ignored, so a replay, a reload or a
 * duplicate delivery never shows twice. Read state is the server's:
 * everything up to `upto`, plus single `ids` above it. Marking read here asks
 * the server; the server tells every tab of the user (`read`), this one included.
 */
(function (herald) {
  'use strict';

  herald.Notifications = Backbone.Collection.extend({
    model: herald.Notification,

    initialize: function (models, options) {
      this.limit = (options && options.limit) || 200;
      this.upto = null;
      this.readIds = {};
      this.listenTo(herald.dispatcher, 'notification', function (envelope) { this.receive(envelope); });
      this.listenTo(herald.dispatcher, 'snapshot', this.receiveAll);
      this.listenTo(herald.dispatcher, 'read', this.applyRead);
    },

    // Newest (largest id) first.
    comparator: function (a, b) {
      return herald.compareIds(b.id, a.id);
    },

    isRead: function (id) {
      return Boolean(this.readIds[id]) || (this.upto !== null && herald.compareIds(id, this.upto) <= 0);
    },

    receive: function (envelope, options) {
      if (this.get(envelope.id)) return;
      this.add(_.extend({}, envelope, {read: this.isRead(envelope.id)}), options);
      if (this.length > this.limit) this.remove(this.last(this.length - this.limit));
    },

    // Take in a list of envelopes (a REST snapshot), skipping those held. Views
    // see `options.snapshot` on these adds: history, not news (no toasts).
    receiveAll: function (envelopes) {
      _.each(envelopes, function (envelope) { this.receive(envelope, {snapshot: true}); }, this);
    },

    // The server's read state, whole or a change: {upto: id or null, ids: [...]}.
    applyRead: function (change) {
      if (change.upto && (this.upto === null || herald.compareIds(change.upto, this.upto) > 0)) {
        this.upto = change.upto;
      }
      _.each(change.ids || [], function (id) { this.readIds[id] = true; }, this);
      this.each(function (model) {
        if (!model.get('read') && this.isRead(model.id)) model.set('read', true);
      }, this);
    },

    unreadCount: function () {
      return this.where({read: false}).length;
    },

    markRead: function (model) {
      if (model.get('read')) return;
      model.set('read', true);
      herald.client.markRead({ids: [model.id]}).catch(function () { /* the next connect resyncs */ });
    },

    markAllRead: function () {
      if (this.isEmpty()) return;
      var newest = this.first().id;
      this.applyRead({upto: newest, ids: []});
      herald.client.markRead({upto: newest}).catch(function () { /* the next connect resyncs */ });
    }
  });
})(window.herald = window.herald || {});
