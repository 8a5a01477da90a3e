/*
 * One notification: the server's envelope plus a local `read` flag.
 *
 * Times show in the user's own zone (the browser's): relative ("5 min ago"),
 * and exact with the zone's name.
 */
(function (herald) {
  'use strict';

  var SEVERITY_RANK = {info: 0, success: 1, warning: 2, error: 3, critical: 4};
  var EXACT = {year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit',
               minute: '2-digit', second: '2-digit', timeZoneName: 'short'};

  // "just now", "45 sec. ago", "in 5 min.", then the date; in the page's language
  // (static/js/i18n.js: "gerade eben", "vor 45 Sek.").
  herald.relativeTime = function (date, now) {
    return herald.relativeWords(date, now);
  };

  // The exact time in the user's zone and the page's language, e.g. "Nov 23, 2026,
  // 09:15:02 AM CET". One formatter, made on first use: toLocaleString with options
  // builds a new one on every call, which costs more than the rest of drawing an item.
  var exactFormat = null;
  herald.exactTime = function (date) {
    exactFormat = exactFormat || herald.dateFormat(EXACT);
    return exactFormat.format(new Date(date));
  };

  // Machine chatter: a low-severity event of a run (it has a correlation id) or a
  // step of one (started, progress, ...), never one addressed to a person. It is
  // kept under "Activity" and not counted as unread (docs/contract.md, "Inbox").
  var MACHINE_STEP = /\.(started|progress|running|queued|heartbeat)$/;
  herald.isActivity = function (envelope) {
    var severity = envelope.severity || 'info';
    return !envelope.user && (severity === 'info' || severity === 'success') &&
      Boolean(envelope.correlation_id || MACHINE_STEP.test(envelope.topic));
  };

  // The inbox row an envelope is shown in: one row per run (its correlation id), else
  // one per topic and title (identical alerts as one row, "×8"). The feed, its
  // counters and the desktop notifier group by it; the server's row count too
  // (app/web/api/matching.py, row_key, mirrors it).
  herald.rowKey = function (envelope) {
    return envelope.correlation_id ? 'run\n' + envelope.correlation_id
      : 'same\n' + envelope.topic + '\n' + envelope.title;
  };

  // How far a run is (0-100) by its `data`: `percent`, or `progress` as 0-1 or 0-100.
  herald.percentOf = function (data) {
    if (!data || typeof data !== 'object') return null;
    var value = typeof data.percent === 'number' ? data.percent :
      typeof data.progress === 'number' ? (data.progress <= 1 ? data.progress * 100 : data.progress) : null;
    return value === null || !isFinite(value) ? null : Math.max(0, Math.min(100, value));
  };

  // How a run ended, by its newest event's topic or severity: 'succeeded', 'failed' or null.
  herald.outcomeOf = function (envelope) {
    var last = String(envelope.topic || '').split('.').pop();
    if (/^(succeeded|completed|done|finished|success)$/.test(last)) return 'succeeded';
    if (/^(failed|error|errored|aborted|cancelled|canceled)$/.test(last)) return 'failed';
    return null;
  };

  herald.Notification = Backbone.Model.extend({
    defaults: {severity: 'info', read: false},

    // Its inbox row's key (herald.rowKey), kept: a notification's topic, title and
    // correlation id never change, and every counter asks for it of every model.
    rowKey: function () {
      return this.keyOfRow || (this.keyOfRow = herald.rowKey(this.attributes));
    },

    // The publish time as a Date (the envelope's `ts` is ISO-8601 UTC).
    time: function () {
      return new Date(this.get('ts'));
    },

    // True for warning and worse: these also pop up as toasts.
    isAlarming: function () {
      return SEVERITY_RANK[this.get('severity')] >= SEVERITY_RANK.warning;
    },

    relativeTime: function (now) {
      return herald.relativeTime(this.time().getTime(), now);
    },

    exactTime: function () {
      return herald.exactTime(this.time());
    }
  });
})(window.herald = window.herald || {});
