/*
 * Keyboard triage of the feed, as in mail and issue inboxes:
 *
 *   j / k (or ↓ / ↑ in the list)  next / previous row
 *   o or Enter                     open the current row
 *   e                              archive (the selection, else the current row)
 *   s                              snooze the current row (its menu opens)
 *   u                              read / unread (the selection, else the current row)
 *   x                              select the current row (Shift+click: a range)
 *   Shift+I / Shift+U              mark the selection (else the current row) read / unread
 *   z                              undo the last action
 *   ?                              the list of shortcuts
 *   Escape                         close a menu or the dialog, else clear the selection
 *
 * Shortcuts never fire while typing in a field, nor with Ctrl, Alt or Meta
 * held (the browser's own), nor while a dialog is open.
 */
(function (herald) {
  'use strict';

  function typing(target) {
    if (!target || !target.tagName) return false;
    if (target.isContentEditable) return true;
    var tag = target.tagName.toLowerCase();
    if (tag === 'textarea' || tag === 'select') return true;
    return tag === 'input' && !/^(checkbox|radio|button|submit)$/i.test(target.type);
  }

  herald.FeedKeys = function (options) {
    var feed = options.feed, actions = feed.actions, help = options.help, undo = options.undo;

    function inFeed(target) {
      return target && $.contains(feed.el, target);
    }

    var keys = {
      j: function () { feed.move(1); },
      k: function () { feed.move(-1); },
      o: function () { actions.openCurrent(); },
      e: function () { actions.archiveModels(null, feed.collection.criteria.view !== 'archived'); },
      s: function () { actions.openSnooze(); },
      u: function () { actions.toggleRead(); },
      x: function () { if (feed.current) actions.toggleSelect(feed.current, false); },
      I: function () { actions.setRead(true); },
      U: function () { actions.setRead(false); },
      z: function () { undo.undo(); },
      '?': function () { help.showModal(); }
    };

    document.addEventListener('keydown', function (event) {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      if (help.open || document.querySelector('dialog[open]')) return;  // the dialog's own keys
      var target = event.target, key = event.key;
      if (key === 'Escape') {
        var menu = $(target).closest('details.snooze[open]');
        if (menu.length) {
          menu.prop('open', false).find('summary').trigger('focus');
          event.preventDefault();
        } else if (actions.selection().length && !$(target).closest('#detail').length) {
          actions.clearSelection();
          event.preventDefault();
        }
        return;
      }
      if (typing(target)) return;
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
      // Shift+I and Shift+U; the other letters without Shift ("?" needs it on most layouts).
      var action = null;
      if (key === 'I' || key === 'U') action = event.shiftKey ? keys[key] : null;
      else if (!event.shiftKey || key === '?') action = keys[key] || null;
      if (!action) return;
      event.preventDefault();
      if ((key === 'j' || key === 'k') && feed.current && !inFeed(document.activeElement)) {
        feed.setCurrent(feed.current, true);  // the first press brings the focus to the list
        return;
      }
      action();
    });
  };
})(window.herald = window.herald || {});
