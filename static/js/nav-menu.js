/*
 * The header's page menu on a phone (templates/base.html, static/css/nav-menu.css):
 * a <details> that closes the way a menu does. Escape closes it and puts the focus
 * back on its summary; a click or the focus going anywhere else closes it too, so it
 * never stays open over the page. On a wide screen the links show in a row and the
 * menu is never opened, so nothing here acts there.
 *
 * Loaded by base.html right after the menu, on every page that has it (not through
 * _scripts.html, which some pages, such as the error page, do not include).
 */
(function () {
  'use strict';

  var menu = document.querySelector('details.nav-menu');
  if (!menu) return;
  var summary = menu.querySelector('summary');

  function close(focusSummary) {
    if (!menu.open) return;
    menu.open = false;
    if (focusSummary) summary.focus();
  }

  // On the menu itself, so it runs before the inbox's own keys (feed-keys.js, on the
  // document) and they see it handled: Escape does not also clear a selection there.
  menu.addEventListener('keydown', function (event) {
    if (event.key !== 'Escape' || !menu.open) return;
    event.preventDefault();
    close(true);
  });

  document.addEventListener('click', function (event) {
    if (!menu.contains(event.target)) close(false);
  });

  // Tab past its last link: the focus left, so does the menu. (A focus going nowhere,
  // e.g. to another window, leaves it as it is.)
  menu.addEventListener('focusout', function (event) {
    if (event.relatedTarget && !menu.contains(event.relatedTarget)) close(false);
  });
})();
