/*
 * The feed's `seen` watermark: the newest inbox row the user has had in
 * sight. Seen is apart from read (the badge counts what is unread and not
 * yet seen); the watermark is the user's, shared by their tabs
 * (collections/read-state.js). herald.FeedView (feed-view.js) makes one,
 * `feed.seen`, calls `later()` after it draws, and `stop()` when it goes.
 *
 * Its state is its own: the listeners it holds (the page becoming visible,
 * the feed coming on or off the screen, the watermark moving) and a throttle,
 * so that a flood of rows costs one look a while. Whether the feed is on the
 * screen comes from an IntersectionObserver, not from reading the layout: a
 * read in the middle of a flood made the browser lay out the page there and
 * then. It knows the feed only through `feed.el` (its rows), `feed.collection`
 * and `feed.tab`.
 */
(function (herald) {
  'use strict';

  herald.FeedSeen = function (feed) {
    this.feed = feed;
    this.later = _.throttle(_.bind(this.see, this), 300, {leading: false});  // soon, not in this task
    this.inSight = false;  // the feed on the screen (told by the observer, at once when observed)
    this.sight = new IntersectionObserver(_.bind(function (entries) {
      // Some of it on the screen, or no box at all (hidden: the detail in its place on a
      // phone), as the layout read this replaced counted it.
      var entry = _.last(entries), box = entry.boundingClientRect;
      this.inSight = entry.isIntersecting || (!box.width && !box.height && !box.top && !box.left);
      if (this.inSight) this.later();
    }, this));
    this.sight.observe(feed.el);
    document.addEventListener('visibilitychange', this.later);
    this.listenTo(feed.collection, 'seen', this.show);
  };

  _.extend(herald.FeedSeen.prototype, Backbone.Events, {
    // Shown to the user: the inbox's newest row, while the page is visible and the
    // top of the feed on the screen.
    see: function () {
      var feed = this.feed, el = feed.el;
      if (!this.inSight || document.visibilityState !== 'visible' || feed.collection.criteria.view !== 'feed' ||
          feed.tab !== 'inbox') return;
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
      this.sight.disconnect();
      document.removeEventListener('visibilitychange', this.later);
      this.stopListening();
    }
  });
})(window.herald = window.herald || {});
