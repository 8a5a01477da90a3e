/*
 * "Mark all read", with how many notifications shown are unread; the page
 * title carries the count too.
 */
(function (herald) {
  'use strict';

  var RECOUNT_MS = 100;

  herald.BadgeView = Backbone.View.extend({
    events: {
      'click': 'markAllRead'
    },

    initialize: function () {
      this.baseTitle = document.title;
      this.listenTo(this.collection, 'add remove reset change:read', this.scheduleRender);
      this.render();
    },

    // Counting walks the whole feed: at most every RECOUNT_MS, not once per
    // notification (a replay after a reconnect brings hundreds at once). A timer,
    // not an animation frame: a tab in the background still updates its title.
    scheduleRender: function () {
      if (this.pending) return;
      this.pending = setTimeout(_.bind(function () { this.pending = null; this.render(); }, this), RECOUNT_MS);
    },

    render: function () {
      var count = this.collection.unreadCount();
      this.$('.badge-count').text(count);
      this.$el.toggleClass('has-unread', count > 0);
      document.title = count ? '(' + count + ') ' + this.baseTitle : this.baseTitle;
      return this;
    },

    markAllRead: function () {
      this.collection.markAllRead();
    }
  });
})(window.herald = window.herald || {});
