/*
 * The snooze menu of a feed item (and of the detail view): a <details>, so it
 * opens with Enter or Space, offering a few times from now and a time of the
 * user's choosing, in the user's own zone.
 */
(function (herald) {
  'use strict';

  var e = _.escape, SNOOZE = e(herald.t('Snooze'));

  // Snooze choices: a label and when (ms) from now.
  function snoozeChoices(now) {
    var tomorrow = new Date(now);
    tomorrow.setDate(tomorrow.getDate() + 1);
    tomorrow.setHours(9, 0, 0, 0);
    var monday = new Date(tomorrow);
    monday.setDate(monday.getDate() + ((8 - monday.getDay()) % 7 || 7) - 1);
    return [[herald.tn('{n} hour', '{n} hours', 1), now + 3600000],
            [herald.tn('{n} hour', '{n} hours', 4), now + 4 * 3600000],
            [herald.t('Tomorrow 9:00'), tomorrow.getTime()], [herald.t('Next week'), monday.getTime()]];
  }
  herald.snoozeChoices = snoozeChoices;

  // A value for <input type=datetime-local> in the user's zone.
  herald.localInputValue = function (date) {
    var pad = function (n) { return (n < 10 ? '0' : '') + n; };
    return date.getFullYear() + '-' + pad(date.getMonth() + 1) + '-' + pad(date.getDate()) +
      'T' + pad(date.getHours()) + ':' + pad(date.getMinutes());
  };

  // The snooze menu (a <details>, so it opens with Enter or Space), closed and empty:
  // its choices are made when it opens (fillSnoozeMenu). Every feed item has one,
  // and drawing a datetime input with each was 0.4 of the 1.1 ms a live
  // notification took from the socket to the feed (bench/RESULTS.md); and the
  // choices are then "1 hour from now" when it opens, not when the item was drawn.
  herald.snoozeMenu = function () {
    return '<details class="snooze"><summary>' + SNOOZE + '</summary><div class="menu"></div></details>';
  };

  // Fill the menu of `details` (a snoozeMenu) with the choices from `now`.
  herald.fillSnoozeMenu = function (details, now) {
    var min = herald.localInputValue(new Date(now + 60000));
    details.setAttribute('data-filled', String(now));
    details.querySelector('.menu').innerHTML =
      _.map(snoozeChoices(now), function (choice) {
        return '<button type="button" class="snooze-for" data-until="' + choice[1] + '">' +
          e(choice[0]) + '</button>';
      }).join('') +
      '<label>' + e(herald.t('Until')) + ' <input type="datetime-local" class="snooze-at" min="' + min + '"></label>' +
      '<button type="button" class="snooze-custom">' + e(herald.t('Snooze until then')) + '</button>';
  };

  // Fill each snooze menu under `root` as it opens (`toggle` does not bubble: caught
  // on its way down).
  herald.fillSnoozeMenusOpening = function (root) {
    root.addEventListener('toggle', function (event) {
      var details = event.target;
      if (details.open && details.matches && details.matches('details.snooze')) {
        // Filled just now by the code that opened it (the `s` key): left alone, focus and all.
        var filled = Number(details.getAttribute('data-filled') || 0);
        if (Date.now() - filled > 1000) herald.fillSnoozeMenu(details, Date.now());
      }
    }, true);
  };
})(window.herald = window.herald || {});
