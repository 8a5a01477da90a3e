/*
 * Keyboard triage of the feed, as in mail and issue inboxes. Every action has
 * a key, and `?` lists them all (the shortcuts dialog in dashboard.html):
 *
 *   j / k (or ↓ / ↑ in the list)  next / previous row; the open detail follows
 *   Shift+J / Shift+K              select a range while moving
 *   o or Enter                     open the current row (in the detail)
 *   e                              archive (the selection, else the current row)
 *   s                              snooze: the menu opens where the focus is
 *                                  (the detail's, the selection's, else the row's)
 *   1 … 4 (in an open snooze menu) its first … fourth choice (Enter works too)
 *   u                              read / unread
 *   m                              mute the topic
 *   x                              select the current row (Shift+click: a range)
 *   Shift+A                        select all
 *   Shift+I / Shift+U              mark the selection (else the current row) read / unread
 *   z                              undo the last action
 *   /                              search (the filters open)
 *   g then i / f / a               the tabs: Inbox, For you, Activity
 *   ?                              the list of shortcuts
 *   Escape                         close a menu, the detail or the dialog, else clear the selection
 *
 * While the detail has the focus, e, s, u and m act on what it shows and j/k
 * move without taking the focus from it. Shortcuts never fire while typing in a
 * field, nor with Ctrl, Alt or Meta held (the browser's own), nor while a
 * dialog is open.
 */
(function (herald) {
  'use strict';

  var TAB_KEYS = {i: 'inbox', f: 'foryou', a: 'activity'};
  var G_WINDOW = 1500;  // ms a `g` waits for its second key

  function typing(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable) return true;
    var tag = target.tagName.toLowerCase();
    if (tag === 'textarea' || tag === 'select') return true;
    return tag === 'input' && !/^(checkbox|radio|button|submit)$/i.test(target.type);
  }

  // Click the first element `selector` finds (the bar's tabs and "Select all": what a
  // click there does, the key does).
  function press(selector) {
    var el = document.querySelector(selector);
    if (el && !el.disabled) el.click();
  }

  herald.FeedKeys = function (options) {
    var feed = options.feed, actions = feed.actions, help = options.help, undo = options.undo;
    var detail = options.detail, gAt = 0;

    function inFeed(target) {
      return target && $.contains(feed.el, target);
    }

    // The detail is open and has the focus: the keys act on what it shows.
    function inDetail() {
      return detail && detail.isOpen() && $.contains(detail.el, document.activeElement);
    }

    function snooze() {
      if (inDetail()) return detail.openSnooze();
      if (actions.selection().length) return herald.openSnoozeMenu(document.querySelector('#feed-bar .bulk-snooze'));
      actions.openSnooze();
    }

    function search() {
      var box = document.getElementById('filters-box'), input = document.querySelector('#filters input[name=q]');
      if (box) box.open = true;
      if (input) { input.focus(); input.select(); }
    }

    var keys = {
      j: function () { feed.move(1, !inDetail()); },
      k: function () { feed.move(-1, !inDetail()); },
      o: function () { actions.openCurrent(); },
      e: function () {
        if (inDetail()) return detail.archive();
        actions.archiveModels(null, feed.collection.criteria.view !== 'archived');
      },
      s: snooze,
      u: function () { if (inDetail()) detail.toggleRead(); else actions.toggleRead(); },
      m: function () {
        if (inDetail()) return detail.mute();
        actions.muteTopic(feed.itemByKey(feed.current).attr('data-topic'));
      },
      x: function () { if (feed.current) actions.toggleSelect(feed.current, false); },
      z: function () { undo.undo(); },
      '/': search,
      '?': function () { help.showModal(); }
    };
    var shifted = {
      J: function () { actions.extendSelection(1, !inDetail()); },
      K: function () { actions.extendSelection(-1, !inDetail()); },
      A: function () { press('#feed-bar .select-all'); },
      I: function () { actions.setRead(true); },
      U: function () { actions.setRead(false); }
    };

    document.addEventListener('keydown', function (event) {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (help.open || document.querySelector('dialog[open]')) return;  // the dialog's own keys
      var target = event.target, key = event.key;
      var menu = $(target).closest('details.snooze[open]');
      if (key === 'Escape') {
        if (menu.length) {
          menu.prop('open', false).find('summary').trigger('focus');
          event.preventDefault();
        } else if (actions.selection().length && !$(target).closest('#detail').length) {
          actions.clearSelection();
          event.preventDefault();
        } else if (target === document.querySelector('#filters input[name=q]')) {
          target.blur();  // back to the keys
        }
        return;
      }
      if (typing(target)) return;
      // In an open snooze menu a digit picks that choice.
      if (menu.length && /^[1-9]$/.test(key)) {
        var choice = menu.find('.snooze-for')[Number(key) - 1];
        if (choice) {
          event.preventDefault();
          choice.click();
        }
        return;
      }
      if ((key === 'ArrowDown' || key === 'ArrowUp') && inFeed(target)) {
        feed.move(key === 'ArrowDown' ? 1 : -1);
        event.preventDefault();
        return;
      }
      if (key === 'Enter' && inFeed(target) && $(target).is('li.notification')) {
        actions.openCurrent();
        event.preventDefault();
        return;
      }
      // g then i, f or a: a tab.
      var g = Date.now() - gAt < G_WINDOW;
      gAt = 0;
      if (g && !event.shiftKey && TAB_KEYS[key]) {
        event.preventDefault();
        return press('#tab-' + TAB_KEYS[key]);
      }
      if (key === 'g' && !event.shiftKey) {
        gAt = Date.now();
        event.preventDefault();
        return;
      }
      // Letters with Shift are other keys; "/" and "?" need Shift on some layouts, not on others.
      var action = (event.shiftKey ? shifted[key] : keys[key]) || (key === '/' || key === '?' ? keys[key] : null);
      if (!action) return;
      event.preventDefault();
      if ((key === 'j' || key === 'k') && feed.current && !inFeed(document.activeElement) && !inDetail()) {
        feed.setCurrent(feed.current, true);  // the first press brings the focus to the list
        return;
      }
      action();
    });
  };
})(window.herald = window.herald || {});
