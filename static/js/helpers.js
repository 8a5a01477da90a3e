/*
 * Small helpers the dashboard's modules share.
 *
 * Notification ids compare as Herald's client library compares them
 * (digit strings, so ids past 2^53 stay exact) and place a new one in a
 * list kept newest first; `covers` says whether a
 * list of subscription prefixes covers a topic (`*`, the topic itself, or
 * a prefix on a segment boundary).
 */
(function (herald) {
  'use strict';

  // -1, 0 or 1, as ids "<ms>-<seq>" compare.
  herald.compareIds = Herald.compareIds;
  herald.isPast = Herald.isPast;

  // Where an item with `id` goes in a list kept newest first (the index of the
  // first item older than it), by bisection; `idAt(i)` is the id of item i.
  herald.placeNewestFirst = function (length, idAt, id) {
    var low = 0, high = length;
    while (low < high) {
      var middle = (low + high) >>> 1;
      if (herald.compareIds(idAt(middle), id) > 0) low = middle + 1; else high = middle;
    }
    return low;
  };

  // Run `fn` once, with the next frame the page draws (so what it changes is drawn in
  // the same frame as what scheduled it, not in a frame of its own), or after
  // `fallbackMs` if no frame comes first: a tab in the background draws none.
  herald.withNextFrame = function (fn, fallbackMs) {
    var done = false, timer = null;
    function once() {
      if (done) return;
      done = true;
      clearTimeout(timer);
      fn();
    }
    window.requestAnimationFrame(once);
    timer = setTimeout(once, fallbackMs);
  };

  herald.covers = function (topics, topic) {
    return _.some(topics, function (t) {
      return t === '*' || t === topic || topic.indexOf(t + '.') === 0;
    });
  };
})(window.herald = window.herald || {});
