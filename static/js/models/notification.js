/*
 * One notification: the server's envelope plus a local `read` flag.
 */
(function (herald) {
  'use strict';

  var SEVERITY_RANK = {info: 0, success: 1, warning: 2, error: 3, critical: 4};

  herald.Notification = Backbone.Model.extend({
    defaults: {severity: 'info', read: false},

    // The publish time as a Date (the envelope's `ts` is ISO-8601 UTC).
    time: function () {
      return new Date(this.get('ts'));
    },

    // True for warning and worse: these also pop up as toasts.
    isAlarming: function () {
      return SEVERITY_RANK[this.get('severity')] >= SEVERITY_RANK.warning;
    },

    // "just now", "42 s ago", "5 min ago", "3 h ago", then the date.
    relativeTime: function (now) {
      var seconds = Math.max(0, Math.round(((now || Date.now()) - this.time()) / 1000));
      if (seconds < 5) return 'just now';
      if (seconds < 60) return seconds + ' s ago';
      if (seconds < 3600) return Math.floor(seconds / 60) + ' min ago';
      if (seconds < 86400) return Math.floor(seconds / 3600) + ' h ago';
      return this.time().toLocaleDateString();
    }
  });
})(window.herald = window.herald || {});
