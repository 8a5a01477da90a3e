/*
 * The feed's window: part of herald.FeedView (feed-view.js), whose prototype it
 * extends. Only the top of the tab's rows is drawn, down to a little past what
 * the user has scrolled to or moved to; the rest are held (the collection keeps
 * up to 500, more once the user loads older ones) and drawn when the user comes
 * near them.
 *
 * Why: every frame's paint, layout and rasterising grew with the rows in the
 * list. With 460 rows a live notification's frame cost 33 ms of the page's
 * main thread, which the next notification waited out (docs/capacity.md).
 *
 * The list is always a prefix of the tab's rows in their order (`ordered`):
 * pinned first, then the rest, newest first. So:
 * - a row that comes where the drawn part ends, with rows held past it, is not
 *   drawn until the window reaches it;
 * - with the reader at the top, once SLACK rows past `limit` have gathered the
 *   last are let go together (never the current row while the user works in
 *   the list, nor one holding the focus or an open menu); further down, none is;
 * - a marker after the list (`.feed-end`) draws the next PAGE rows when it comes
 *   within a screen of the viewport, and j/k past the last drawn row draws them
 *   too. Back at the top, the window shrinks to PAGE again;
 * - "Load older notifications" shows once the last row held is drawn.
 *
 * What the user acts on as "all the rows" (select all, mark all read, Shift+J's
 * range) is every row of the tab, drawn or not (`shownKeys`).
 */
(function (herald) {
  'use strict';

  var PAGE = 50;
  // Rows past the window let go together, once this many have gathered: letting one go
  // with each live one cost more than drawing it (0.28 ms a notification).
  var SLACK = 25;
  herald.FEED_PAGE = PAGE;

  _.extend(herald.FeedView.prototype, {
    // The tab's rows in the list's order: [{group, key, d}], pinned first, then the
    // rest, each newest first (d: herald.describeGroup's).
    ordered: function () {
      var pinned = [], rest = [], self = this;
      _.each(this.group(), function (group) {
        var d = herald.describeGroup(group, self.collection);
        if (!self.inTab(d, self.tab)) return;
        (self.pinned(d) ? pinned : rest).push({group: group, key: self.key(group[0]), d: d});
      });
      return pinned.concat(rest);
    },

    // The keys of every row of the tab, drawn or not, in the list's order.
    shownKeys: function () {
      return _.pluck(this.ordered(), 'key');
    },

    // Watch the list's two ends: near the top (the window may shrink) and the
    // marker after it (the window grows).
    watchWindow: function () {
      var self = this;
      this.limit = PAGE;
      this.more = false;  // rows of the tab held past the drawn ones
      this.nearTop = true;
      this.end = document.createElement('div');
      this.end.className = 'feed-end';
      this.end.setAttribute('aria-hidden', 'true');
      this.el.parentNode.insertBefore(this.end, this.el.nextSibling);
      // A screen ahead: the next rows are drawn before the user reaches them.
      this.ends = new IntersectionObserver(function (entries) {
        _.each(entries, function (entry) {
          if (entry.target === self.end) {
            if (entry.isIntersecting) self.drawMore();
          } else {
            self.nearTop = entry.isIntersecting;
          }
        });
      }, {rootMargin: '100% 0px 100% 0px'});
      this.ends.observe(this.end);
      this.ends.observe(this.el.previousElementSibling || this.el);
    },

    // Observing the marker again says at once whether it is near (then more is drawn):
    // the observer says only when that changes, and a draw can leave it near.
    checkEnd: function () {
      if (!this.more) return;
      this.ends.unobserve(this.end);
      this.ends.observe(this.end);
    },

    // Whether rows of the tab are held past the drawn ones. While they are, the list has
    // the class `has-more`, which hides "Load older notifications" (herald.css): that
    // button belongs after the last row held, and shown before it, the rows drawn as
    // the reader neared it pushed it away from under the pointer.
    setMore: function (more) {
      if (more === this.more) return;
      this.more = more;
      this.el.classList.toggle('has-more', more);
    },

    // Start again from one PAGE (another tab, another filter).
    resetWindow: function () {
      this.limit = PAGE;
    },

    // How many rows to draw: the window, and at least down to the current row while
    // the user works in the list.
    windowFor: function (all, working) {
      var limit = this.limit;
      if (working && this.current) {
        var at = _.findIndex(all, {key: this.current});
        if (at >= limit) limit = this.limit = at + 1;
      }
      return limit;
    },

    // Draw the next PAGE rows of the tab after the last one drawn.
    drawMore: function () {
      if (!this.more || this.pending) return false;
      var all = this.ordered(), drawn = this.el.querySelectorAll('li.notification').length, self = this;
      this.limit = drawn + PAGE;
      var items = [];
      _.each(all.slice(drawn, this.limit), function (row) {
        if (self.itemByKey(row.key).length) return;  // drawn already (the list is a prefix)
        var item = self.draw(row.group, row.d);
        if (!item) return;
        self.groups[row.group[0].id] = row.group;
        items.push(item);
      });
      this.el.append.apply(this.el, items);
      this.setMore(all.length > this.limit);
      this.checkEnd();
      this.trigger('changed');
      return items.length > 0;
    },

    // Draw the held rows down to the row of `key`: its row, or null when the tab has none.
    drawUpTo: function (key) {
      while (!this.itemByKey(key).length && this.drawMore()) { /* a PAGE at a time */ }
      return this.itemByKey(key)[0] || null;
    },

    // After a row came in. Further down, the window grows by it: the rows the reader is
    // looking at stay. At the top: back to one PAGE (unless the user works in the list),
    // and once SLACK rows past it have gathered, those let go, from the end (not one the
    // user is on or in).
    fitWindow: function () {
      var working = this.following || $.contains(this.el, document.activeElement);
      var count = this.el.childElementCount;
      if (!this.nearTop) {
        this.limit = Math.max(this.limit, count);
        return;
      }
      if (!working) this.limit = PAGE;
      if (count <= this.limit + SLACK) return;
      while (count > this.limit) {
        var last = this.el.lastElementChild, key = last.getAttribute('data-key');
        if ((key === this.current && working) || $.contains(last, document.activeElement) ||
            last.querySelector('details.snooze[open]')) {
          break;
        }
        last.remove();
        this.rows.delete(key);
        delete this.groups[last.getAttribute('data-id')];
        this.setMore(true);
        count -= 1;
      }
    },

    // Whether a row whose place is `before` (null: after every drawn row) is drawn:
    // not when rows held past the drawn ones come before it.
    inWindow: function (before) {
      return Boolean(before) || !this.more;
    },

    stopWatchingWindow: function () {
      this.ends.disconnect();
      this.end.remove();
    }
  });
})(window.herald = window.herald || {});
