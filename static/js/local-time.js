/*
 * Times in the reader's own time zone (the browser's), never raw UTC.
 *
 * `herald.timeHtml(iso)` is a `<time datetime="ISO">` element as HTML, for
 * views that build their markup as strings; its text is the local date and
 * time, its title the same with the zone's name, so that a glance says
 * which zone it is. Anything that is not a time is shown as it came, escaped.
 */
(function (herald) {
  'use strict';

  // In the page's language (static/js/i18n.js, loaded first).
  var SHORT = herald.dateFormat({dateStyle: 'medium', timeStyle: 'short'});
  var LONG = herald.dateFormat({dateStyle: 'full', timeStyle: 'long'});

  function parse(value) {
    var date = value instanceof Date ? value : new Date(value);
    return isNaN(date.getTime()) ? null : date;
  }

  herald.localTime = function (value) {
    var date = parse(value);
    return date ? SHORT.format(date) : String(value === undefined || value === null ? '' : value);
  };

  herald.timeHtml = function (value) {
    var date = parse(value), e = _.escape;
    if (!date) return e(herald.localTime(value));
    return '<time datetime="' + e(date.toISOString()) + '" title="' + e(LONG.format(date)) + '">' +
      e(SHORT.format(date)) + '</time>';
  };
})(window.herald = window.herald || {});
