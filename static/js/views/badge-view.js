/*
 * The header's badge: how many rows of the inbox are unread, by the same rule
 * as the tabs' counts (collections/read-state.js, unreadCounts), machine
 * chatter (Activity) left out, past the loaded pages too (unread-total.js). The
 * page's title carries the same count, so a tab in the background says it.
 * While the view (re)loads, the last number stays (aria-busy), "…" before any.
 */
(function (herald) {
  'use strict';

  var RECOUNT_MS = 100;

  herald.BadgeView = Backbone.View.extend({
    // options.keyOf(model): the row a notification is shown in (feed-view.js's `key`).
    initialize: function (options) {
      this.keyOf = options.keyOf;
      this.baseTitle = document.title;
      this.total = this.collection.unreadTotal(this.keyOf);
      this.listenTo(this.collection, 'add remove reset change:read loading loaded', this.scheduleRender);
      this.listenTo(this.total, 'change', this.scheduleRender);
      this.render();
    },

    // Counting walks the whole feed: once a frame, not once per notification (a
    // replay after a reconnect brings hundreds at once), and in the frame that draws
    // the new row, not in one of its own after it (each frame repaints the list).
    // A tab in the background draws no frames: there RECOUNT_MS still updates its title.
    scheduleRender: function () {
      if (this.pending) return;
      this.pending = true;
      herald.withNextFrame(_.bind(function () { this.pending = false; this.render(); }, this), RECOUNT_MS);
    },

    render: function () {
      var loading = this.collection.loaded === false;
      if (this.collection.loaded) this.shown = this.total.counts();  // "…" before the first load
      var shown = this.shown, count = shown ? shown.inbox : 0;
      var text = shown ? herald.unreadText(count, shown.more.inbox) : '…';
      this.$('.badge-count').text(text);
      this.$el.toggleClass('has-unread', count > 0).attr('aria-busy', loading ? 'true' : null);
      document.title = count ? '(' + text + ') ' + this.baseTitle : this.baseTitle;
      return this;
    }
  });
})(window.herald = window.herald || {});
