/*
 * The open detail follows the feed's current row, as an inbox's reading pane
 * does (Linear, Superhuman): j/k move the row and the detail with it; the row
 * shown archived, snoozed or muted, the row now in its place is shown; the
 * list empty, the detail closes. So the detail never shows an item gone from
 * the list, with buttons that would still act on it (issue 38).
 *
 *   herald.DetailFollow({feed, detail, open, close})
 *
 * `open(id)` shows notification `id` in the detail without moving the focus
 * (and puts it in the URL in place of the one before: no history entry per
 * row); `close()` closes the detail. While the detail is open the feed keeps
 * its current row where the user put it (`feed.following`).
 */
(function (herald) {
  'use strict';

  herald.DetailFollow = function (options) {
    var feed = options.feed, detail = options.detail, collection = feed.collection;

    // The id the row of `key` shows (its newest), or null.
    function shownBy(key) {
      var group = key && feed.byKey[key];
      return group && group.length ? group[0].id : null;
    }

    // Whether the row of `key` is the one the detail shows (any of its group).
    function showing(key) {
      var group = (key && feed.byKey[key]) || [];
      return _.some(group, function (model) { return model.id === detail.shown; });
    }

    detail.on('shown', function () { feed.following = true; });
    detail.on('hidden', function () { feed.following = false; });

    // The user moved the current row (or it left and the next took its place).
    feed.on('current', function (key) {
      if (!detail.isOpen() || showing(key)) return;
      var id = shownBy(key);
      if (id) options.open(id);
    });

    // Drawn again: is what the detail shows still in the list?
    feed.on('rendered changed', function () {
      if (!detail.isOpen() || !detail.fromCollection || collection.get(detail.shown)) return;
      var id = shownBy(feed.current);
      if (id) options.open(id); else options.close();
    });
  };
})(window.herald = window.herald || {});
