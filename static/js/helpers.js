/*
 * Small helpers the dashboard's modules share.
 *
 * Notification ids compare as Herald's client library compares them
 * (digit strings, so ids past 2^53 stay exact); `covers` says whether a
 * list of subscription prefixes covers a topic (`*`, the topic itself, or
 * a prefix on a segment boundary).
 */
(function (herald) {
  'use strict';

  // -1, 0 or 1, as ids "<ms>-<seq>" compare.
  herald.compareIds = Herald.compareIds;

  herald.covers = function (topics, topic) {
    return _.some(topics, function (t) {
      return t === '*' || t === topic || topic.indexOf(t + '.') === 0;
    });
  };
})(window.herald = window.herald || {});
