/*
 * The page's language in its scripts: messages, plurals, dates, relative times.
 *
 * The server embeds the messages of the page's locale (translations/<locale>,
 * the ones found in static/js) as `#herald-i18n` (app/web/i18n.py); English
 * needs none: a message is its own English text. The locale is the page's
 * (`<html lang>`), so its dates and relative times never speak another language.
 *
 *   herald.t('Snoozed until {time}', {time: when})
 *   herald.tn('{n} notification', '{n} notifications', n)   // {n} is filled in
 *   herald.tHtml('started {time}', {time: '<time>…</time>'})  // values are HTML
 */
(function (herald) {
  'use strict';

  var island = document.getElementById('herald-i18n'), data = {};
  try { data = island ? JSON.parse(island.textContent) : {}; } catch (ignored) { data = {}; }
  var messages = data.messages || {};
  herald.locale = document.documentElement.lang || data.locale || 'en';
  var plurals = new Intl.PluralRules(herald.locale);

  function fill(text, values) {
    if (!values) return text;
    return text.replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? String(values[name]) : whole;
    });
  }

  herald.t = function (message, values) {
    var text = messages[message];
    return fill(typeof text === 'string' && text ? text : message, values);
  };

  // The message as HTML: its text escaped, `html`'s values put in as they are (markup
  // the caller built, escaped already), e.g. tHtml('started {time}', {time: timeHtml(at)}).
  herald.tHtml = function (message, html) {
    var text = messages[message];
    return fill(_.escape(typeof text === 'string' && text ? text : message), html);
  };

  // English and German have two forms: "one" is the first, everything else the second.
  herald.tn = function (singular, plural, n, values) {
    var forms = messages[singular], index = plurals.select(n) === 'one' ? 0 : 1;
    var text = _.isArray(forms) && forms[index] ? forms[index] : (index ? plural : singular);
    return fill(text, _.extend({n: n}, values));
  };

  // A failed request's words for a person (`error.message`): the client library's own
  // sentences (clients/js/herald.js, `failure`) in the page's language; the server's
  // words (a refusal naming a field) as they came. The list is there for pybabel to
  // find the client's sentences (herald.js is not among the page's scripts to extract).
  herald.CLIENT_MESSAGES = [
    herald.t('Herald is unreachable: your change was not saved.'),
    herald.t('Herald is unreachable: this could not be loaded.'),
    herald.t('Herald is unreachable (its database, Redis, is not answering): your change was not saved.'),
    herald.t('Herald is unreachable (its database, Redis, is not answering): this could not be loaded.'),
    herald.t('Too many requests: your change was not saved. Try again in a moment.'),
    herald.t('Too many requests: this could not be loaded. Try again in a moment.')
  ];
  // Always one or more whole sentences, ending with a stop: put it at the end of a
  // message ('Not done: {why}'), never before another '.' (that made "saved..").
  herald.errorText = function (error) {
    var text = $.trim(error && error.message ? herald.t(String(error.message)) : herald.t('Herald is unreachable'));
    return /[.!?…]$/.test(text) ? text : text + '.';
  };

  // Formatters are made once: building one costs more than drawing a row.
  herald.dateFormat = function (options) {
    return new Intl.DateTimeFormat(herald.locale, options);
  };

  var RELATIVE = new Intl.RelativeTimeFormat(herald.locale, {numeric: 'auto', style: 'short'});
  var STEPS = [[60, 1, 'second'], [3600, 60, 'minute'], [86400, 3600, 'hour'], [7 * 86400, 86400, 'day']];
  var DAY = null;

  // "gerade eben", "vor 45 Sek.", "vor 5 Min.", "in 3 Std.", then the date: a week away or more.
  herald.relativeWords = function (date, now) {
    var delta = Math.round(((now || Date.now()) - date) / 1000), seconds = Math.abs(delta);
    if (seconds < 5) return herald.t('just now');
    for (var i = 0; i < STEPS.length; i++) {
      if (seconds < STEPS[i][0]) {
        var amount = Math.floor(seconds / STEPS[i][1]);
        return RELATIVE.format(delta > 0 ? -amount : amount, STEPS[i][2]);
      }
    }
    DAY = DAY || herald.dateFormat({dateStyle: 'medium'});
    return DAY.format(new Date(date));
  };

  // When the words of `date` (relativeWords, compactWords) may next change, in ms since
  // the epoch: when its age, rounded to the second, reaches the next amount of its unit
  // ("5 min. ago" stays until 6 minutes); every second while "just now" or ahead of the
  // clock; hourly once it is a date. A feed redraws a row's time only then (feed-view.js).
  herald.relativeDue = function (date, now) {
    now = now || Date.now();
    var age = (now - date) / 1000, seconds = Math.round(age);
    if (seconds < 5) return now + 1000;
    for (var i = 0; i < STEPS.length; i++) {
      if (seconds < STEPS[i][0]) {
        var unit = STEPS[i][1], next = (Math.floor(seconds / unit) + 1) * unit;
        return Math.max(now + 1, date + (next - 0.5) * 1000);
      }
    }
    return now + 3600 * 1000;
  };

  // The same, compact, for a row's time on a phone (feed-item.js): "now", "29s", "5m", "3h",
  // "2d", then "Nov 2" (or "Nov 2025" another year); German "jetzt", "29 s", "5 min", "3 h",
  // "2 T", "2. Nov.". Only the amount: a feed's times are past ones.
  var SHORT_DAY = null, SHORT_MONTH = null;
  herald.compactWords = function (date, now) {
    var seconds = Math.abs(Math.round(((now || Date.now()) - date) / 1000));
    if (seconds < 5) return herald.t('now');
    var units = [herald.t('{n}s'), herald.t('{n}m'), herald.t('{n}h'), herald.t('{n}d')];
    for (var i = 0; i < STEPS.length; i++) {
      if (seconds < STEPS[i][0]) return units[i].replace('{n}', Math.floor(seconds / STEPS[i][1]));
    }
    var day = new Date(date);
    if (day.getFullYear() === new Date(now || Date.now()).getFullYear()) {
      SHORT_DAY = SHORT_DAY || herald.dateFormat({month: 'short', day: 'numeric'});
      return SHORT_DAY.format(day);
    }
    SHORT_MONTH = SHORT_MONTH || herald.dateFormat({month: 'short', year: 'numeric'});
    return SHORT_MONTH.format(day);
  };
})(window.herald = window.herald || {});
