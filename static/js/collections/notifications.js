/*
 * The feed's notifications, newest first, at most `limit` of them.
 *
 * Fed by the dispatcher; a notification already held (same id) is ignored,
 * so a replay or a duplicate delivery never shows twice.
 */
(function (herald) {
  'use strict';

  herald.Notifications = Backbone.Collection.extend({
    model: herald.Notification,

    initialize: function (models, options) {
      this.limit = (options && options.limit) || 200;
      this.listenTo(herald.dispatcher, 'notification', this.receive);
    },

    // Newest (largest id) first.
    comparator: function (a, b) {
      return herald.compareIds(b.id, a.id);
    },

    receive: function (envelope) {
      if (this.get(envelope.id)) return;
      this.add(envelope);
      if (this.length > this.limit) this.remove(this.last(this.length - this.limit));
    },

    unreadCount: function () {
      return this.where({read: false}).length;
    },

    markAllRead: function () {
      this.each(function (model) { model.set('read', true); });
    }
  });
})(window.herald = window.herald || {});
