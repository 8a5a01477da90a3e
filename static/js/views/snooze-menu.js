/*
 * The snooze menu of a feed item (and of the detail view): a <details>, so it
 * opens with Enter or Space, offering a few times from now and a time of the
 * user's choosing, in the user's own zone. By keys: `s` opens it, a digit
 * picks a choice (feed-keys.js).
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

  // A feed row's snooze control until it is first used: a plain button, made into the
  // menu by snoozeMenuOf. A <details> makes a shadow tree of its own as it is drawn:
  // half of the 1.5 ms a live notification took from the socket to the feed, and
  // 50 ms for a page of 100 rows (bench/browser_latency.py, "drawn").
  herald.snoozeLater = function () {
    return '<button type="button" class="snooze-later" tabindex="-1" aria-expanded="false">' + SNOOZE +
      '</button>';
  };

  // The snooze menu of `root` (a feed row): its <details>, made from its snoozeLater
  // button the first time (in its place, in the Tab order and with the focus as it
  // was); null for none.
  herald.snoozeMenuOf = function (root) {
    if (!root) return null;
    var details = root.querySelector('details.snooze');
    var later = details ? null : root.querySelector('.snooze-later');
    if (!later) return details;
    var holder = document.createElement('div');
    holder.innerHTML = herald.snoozeMenu();
    details = holder.firstChild;
    var summary = details.querySelector('summary'), focused = document.activeElement === later;
    summary.tabIndex = later.tabIndex;
    // The focus moves before the button goes, so it never leaves the row: the row's
    // actions show only while it is there, and a hidden control takes no focus.
    later.parentNode.insertBefore(details, later);
    if (focused) summary.focus();
    later.parentNode.removeChild(later);
    return details;
  };

  // Fill the menu of `details` (a snoozeMenu) with the choices from `now`.
  herald.fillSnoozeMenu = function (details, now) {
    var min = herald.localInputValue(new Date(now + 60000));
    details.setAttribute('data-filled', String(now));
    details.querySelector('.menu').innerHTML =
      _.map(snoozeChoices(now), function (choice, i) {
        // Its key (a digit while the menu is open), shown, not read out: the name stays the time.
        return '<button type="button" class="snooze-for" data-until="' + choice[1] + '">' +
          '<kbd aria-hidden="true">' + (i + 1) + '</kbd> ' + e(choice[0]) + '</button>';
      }).join('') +
      '<label>' + e(herald.t('Until')) + ' <input type="datetime-local" class="snooze-at" min="' + min + '"></label>' +
      '<button type="button" class="snooze-custom">' + e(herald.t('Snooze until then')) + '</button>';
  };

  // Open again the menu of `row` (a row drawn anew in place of one whose menu was open),
  // without moving the focus: filled as it opens (fillSnoozeMenusOpening).
  herald.reopenSnoozeMenu = function (row) {
    var details = herald.snoozeMenuOf(row);
    if (details) details.open = true;
  };

  // Open the snooze menu `details` (the `s` key): filled from now, its first choice
  // focused, so Enter or a digit (1..n: the nth choice, feed-keys.js) picks one.
  herald.openSnoozeMenu = function (details) {
    if (!details) return;
    herald.fillSnoozeMenu(details, Date.now());
    details.open = true;
    var first = details.querySelector('.snooze-for');
    if (first) first.focus();
  };

  // The time the menu of `button` ("Snooze until then") was given, in ms; null (and
  // said, the input marked) when it is not in the future.
  herald.snoozeMenuUntil = function (button) {
    var input = $(button).closest('.menu').find('.snooze-at');
    var until = input.val() ? new Date(input.val()).getTime() : NaN;
    if (until > Date.now()) return until;
    input.attr('aria-invalid', 'true').trigger('focus');
    herald.dispatcher.trigger('action:error', herald.t('Choose a time in the future to snooze until.'));
    return null;
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
