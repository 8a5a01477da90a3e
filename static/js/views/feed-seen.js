/*
 * The feed's `seen` watermark: the newest inbox row the user has had in
 * sight. Seen is apart from read (the badge counts what is unread and not
 * yet seen); the watermark is the user's, shared by their tabs
 * (collections/read-state.js). herald.FeedView (feed-view.js) makes one,
 * `feed.seen`, calls `later()` after it draws, and `stop()` when it goes.
 *
 * Its state is its own: the listeners it holds (the page becoming visible,
 * a scroll, the watermark moving) and a throttle, so that a flood of rows
 * costs one look at the layout a while. It knows the feed only through
 * `feed.el` (its rows), `feed.collection` and `feed.tab`.
 */
(function (herald) {
  'use strict';

  herald.FeedSeen = function (feed) {
    this.feed = feed;
    this.later = _.throttle(_.bind(this.see, this), 300, {leading: false});  // soon, not in this task
    document.addEventListener('visibilitychange', this.later);
    window.addEventListener('scroll', this.later, {passive: true});
    this.listenTo(feed.collection, 'seen', this.show);
  };

  _.extend(herald.FeedSeen.prototype, Backbone.Events, {
    // Shown to the user: the inbox's newest row, while the page is visible and the
    // top of the feed on the screen.
    see: function () {
      var feed = this.feed, el = feed.el;
      if (document.visibilityState !== 'visible' || feed.collection.criteria.view !== 'feed' ||
          feed.tab !== 'inbox') return;
      var top = el.getBoundingClientRect().top;
      if (top > window.innerHeight || top < -el.offsetHeight) return;
      // The newest row: the first unpinned one, or a pinned one (few) if newer.
      var first = el.querySelector('li.notification:not(.pinned)');
      var newest = first ? first.getAttribute('data-id') : null;
      _.each(el.querySelectorAll('li.notification.pinned'), function (item) {
        var id = item.getAttribute('data-id');
        if (!newest || herald.compareIds(id, newest) > 0) newest = id;
      });
      if (newest) feed.collection.markSeen(newest);
    },

    // The watermark moved (here or in another tab): rows up to it lose their mark.
    show: function () {
      var collection = this.feed.collection;
      _.each(this.feed.el.querySelectorAll('li.notification.unseen'), function (item) {
        if (collection.isSeen(item.getAttribute('data-id'))) item.classList.remove('unseen');
      });
    },

    stop: function () {
      this.later.cancel();
      document.removeEventListener('visibilitychange', this.later);
      window.removeEventListener('scroll', this.later);
      this.stopListening();
    }
  });
})(window.herald = window.herald || {});
