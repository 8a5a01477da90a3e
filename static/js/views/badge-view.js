/*
 * The header's badge: how many rows of the inbox are unread, by the same rule
 * as the tabs' counts (collections/read-state.js, unreadCounts), machine
 * chatter (Activity) left out, past the loaded pages too (unread-total.js). The
 * page's title carries the same count (changed at most once a second), so a tab
 * in the background says it.
 * While the view (re)loads, the last number stays (aria-busy), "…" before any.
 */
(function (herald) {
  'use strict';

  var RECOUNT_MS = 100;
  // The page's title changes at most this often: each change costs the browser's own
  // process several ms (more than the page's whole drawing of the new row), and a
  // title is read at a glance, not followed notification by notification.
  var TITLE_MS = 1000;

  herald.BadgeView = Backbone.View.extend({
    // options.keyOf(model): the row a notification is shown in (feed-view.js's `key`).
    initialize: function (options) {
      this.keyOf = options.keyOf;
      this.baseTitle = document.title;
      this.titleAt = -Infinity;  // performance.now() of the title's last change
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
      this.showTitle(count ? '(' + text + ') ' + this.baseTitle : this.baseTitle);
      return this;
    },

    // At once when the last change is TITLE_MS old, else the newest wanted when it is.
    showTitle: function (title) {
      this.wantedTitle = title;
      if (this.titleTimer || document.title === title) return;
      var wait = this.titleAt + TITLE_MS - performance.now();
      if (wait > 0) {
        this.titleTimer = setTimeout(_.bind(function () {
          this.titleTimer = null;
          this.showTitle(this.wantedTitle);
        }, this), Math.ceil(wait));
        return;
      }
      this.titleAt = performance.now();
      document.title = title;
    }
  });
})(window.herald = window.herald || {});
