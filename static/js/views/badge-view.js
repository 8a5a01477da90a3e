/*
 * "Mark all read", with how many notifications shown are unread; the page
 * title carries the count too.
 */
(function (herald) {
  'use strict';

  herald.BadgeView = Backbone.View.extend({
    events: {
      'click': 'markAllRead'
    },

    initialize: function () {
      this.baseTitle = document.title;
      this.listenTo(this.collection, 'add remove reset change:read', this.render);
      this.render();
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
