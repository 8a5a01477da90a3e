/*
 * The feed's current row (the list's one Tab stop) and the rows by key or id:
 * part of herald.FeedView (feed-view.js), whose prototype it extends.
 *
 * Only the current row's controls are in the Tab order (a roving tabindex).
 * j/k and the arrows move it (feed-keys.js), the focus with it unless the
 * open detail keeps the focus. A move by the user is said as `current`
 * (moveTo), which the open detail follows (detail-follow.js); setCurrent
 * alone (a draw putting the Tab stop back) says nothing.
 */
(function (herald) {
  'use strict';

  _.extend(herald.FeedView.prototype, {
    // The row of group `key` (a jQuery object, empty when it is not in the list): the one
    // drawn last for it (`rows`), while it is in the list. Not a query of the list: a live
    // notification looks up several rows, and the list holds hundreds.
    itemByKey: function (key) {
      var item = key ? this.rows.get(key) : null;
      return $(item && item.parentNode === this.el ? item : []);
    },

    itemById: function (id) {
      return this.$('li.notification[data-id="' + CSS.escape(String(id)) + '"]');
    },

    firstKey: function () {
      var first = this.el.querySelector('li.notification');
      return first ? first.getAttribute('data-key') : null;
    },

    // Put a row's controls in the Tab order (or out of it).
    roving: function (item, on) {
      _.each(item.querySelectorAll('button, input, summary'), function (control) {
        control.tabIndex = on ? 0 : -1;
      });
      item.classList.toggle('current', on);
    },

    setCurrent: function (key, focus) {
      var old = this.itemByKey(this.current);
      if (old.length && this.current !== key) this.roving(old[0], false);
      this.current = key;
      var item = this.itemByKey(key);
      if (!item.length) return item;
      this.roving(item[0], true);
      if (focus) item.find('button.open').trigger('focus');
      return item;
    },

    // The user's move to row `key` (or none): set, and said as `current` when it changed.
    moveTo: function (key, focus) {
      var changed = key !== this.current, item = this.setCurrent(key, focus);
      if (changed) this.trigger('current', key);
      return item;
    },

    // Move the current row by `delta` rows; the focus follows unless `focus` is false
    // (it stays in the open detail, which shows the row).
    move: function (delta, focus) {
      var leaving = this.actions.leaving, current = this.itemByKey(this.current);
      var items = this.$('li.notification').filter(function () {  // not those on their way out
        return !leaving[this.getAttribute('data-key')] || this === current[0];
      }), at = items.index(current);
      if (!items.length) return;
      if (at + delta >= items.length && this.drawMore()) return this.move(delta, focus);  // past the drawn rows
      var next = at < 0 ? 0 : Math.max(0, Math.min(items.length - 1, at + delta));
      var item = items.eq(next);
      this.moveTo(item.attr('data-key'), focus !== false);
      item[0].scrollIntoView({block: 'nearest'});
    },

    focusItem: function (event) {
      var key = $(event.currentTarget).attr('data-key');
      if (key !== this.current) this.moveTo(key, false);
    }
  });
})(window.herald = window.herald || {});
