/*
 * How many notifications are new: unread and not yet shown (the `seen`
 * watermark), machine chatter (Activity) left out. The page's title carries
 * the count too, so a tab in the background says it.
 */
(function (herald) {
  'use strict';

  var RECOUNT_MS = 100;

  herald.BadgeView = Backbone.View.extend({
    initialize: function () {
      this.baseTitle = document.title;
      this.listenTo(this.collection, 'add remove reset change:read seen loading', this.scheduleRender);
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
      var loading = this.collection.loaded === false;
      var count = loading ? 0 : this.collection.unseenCount();
      this.$('.badge-count').text(loading ? '…' : count);
      this.$el.toggleClass('has-unread', count > 0).attr('aria-busy', loading ? 'true' : null);
      document.title = count ? '(' + count + ') ' + this.baseTitle : this.baseTitle;
      return this;
    }
  });
})(window.herald = window.herald || {});
