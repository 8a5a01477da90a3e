/*
 * The feed's selection: the rows picked for the bulk bar (bulk-bar.js), part of
 * herald.FeedActions (feed-actions.js), whose prototype it extends.
 *
 * A row is picked by its checkbox (Shift+click: a range from the last one
 * picked), by `x`, by Shift+J / Shift+K (a range grown or shrunk from where it
 * began, as in mail inboxes), or all at once. Its state is `selected` (group
 * key -> true), `anchor` (where a range begins) and `range` (the keys the
 * current Shift+J/K range holds).
 *
 * The checkbox keeps the state the browser gave it on a click: a click's
 * default action is what ticks it, and preventing it (as this did) made the
 * browser put the box back unticked after the handler had ticked it (issue 38).
 */
(function (herald) {
  'use strict';

  _.extend(herald.FeedActions.prototype, {
    selection: function () {
      var byKey = this.feed.byKey;
      return _.filter(_.keys(this.selected), function (key) { return byKey[key]; });
    },

    isSelected: function (key) { return Boolean(this.selected[key]); },

    // Let the selection go without drawing it (the feed is about to be drawn whole).
    forgetSelection: function () {
      this.selected = {};
      this.range = null;
    },

    // Pick (or let go) the rows of `keys`: their class and checkbox, and the bar's count.
    select: function (keys, on) {
      _.each(keys, function (key) {
        if (on) this.selected[key] = true; else delete this.selected[key];
        var item = this.feed.itemByKey(key);
        item.toggleClass('selected', on).find('input.select').prop('checked', on);
      }, this);
      this.feed.trigger('selection', this.selection());
    },

    // The keys of the rows from `a` to `b` (either order), as the list shows them
    // (drawn or not: feed-window.js).
    keysBetween: function (a, b) {
      var keys = this.feed.shownKeys(), from = _.indexOf(keys, a), to = _.indexOf(keys, b);
      if (from < 0 || to < 0) return [b];
      return keys.slice(Math.min(from, to), Math.max(from, to) + 1);
    },

    toggleSelect: function (key, range) {
      if (range && this.anchor && this.feed.itemByKey(this.anchor).length) {
        this.select(this.keysBetween(this.anchor, key), true);
      } else {
        this.select([key], !this.selected[key]);
      }
      this.anchor = key;
      this.range = null;
    },

    // Shift+J / Shift+K: move by `delta` rows, the range from where it began following
    // (grown, or shrunk when going back). `focus`: whether the focus moves with the row.
    extendSelection: function (delta, focus) {
      var feed = this.feed;
      if (!feed.current) return;
      if (!this.range || !_.contains(this.range, feed.current)) {
        this.anchor = feed.current;
        this.range = [feed.current];
        this.select(this.range, true);
      }
      feed.move(delta, focus);
      var keys = this.keysBetween(this.anchor, feed.current);
      this.select(_.difference(this.range, keys), false);
      this.select(keys, true);
      this.range = keys;
    },

    // Every row of the tab, drawn or not (feed-window.js).
    selectAllShown: function () {
      this.select(this.feed.shownKeys(), true);
    },

    clearSelection: function () {
      this.range = null;
      this.select(this.selection(), false);
    },

    // The models an action applies to: the selection, else the current row's.
    targets: function () {
      var byKey = this.feed.byKey, keys = this.selection();
      if (!keys.length && this.feed.current) keys = [this.feed.current];
      return _.flatten(_.map(keys, function (key) { return byKey[key] || []; }));
    },

    // A click on a row's checkbox: the browser ticks (or unticks) it; the state follows.
    clickSelect: function (event) {
      event.stopPropagation();
      var key = $(event.currentTarget).closest('li.notification').attr('data-key');
      this.toggleSelect(key, event.shiftKey);
    }
  });
})(window.herald = window.herald || {});
