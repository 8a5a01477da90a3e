/*
 * Light or dark: the system's choice (prefers-color-scheme, in herald.css) unless
 * the user picked one with the switch at the foot of every page; kept per
 * browser (localStorage). Loaded in <head>, before the page paints, so a
 * chosen theme never flashes the other one first.
 */
(function () {
  'use strict';

  var KEY = 'herald.theme';
  var root = document.documentElement;

  function stored() {
    try { return window.localStorage.getItem(KEY) || ''; } catch (e) { return ''; }
  }

  function apply(theme) {
    if (theme === 'light' || theme === 'dark') root.setAttribute('data-theme', theme);
    else root.removeAttribute('data-theme');
  }

  apply(stored());

  document.addEventListener('DOMContentLoaded', function () {
    var select = document.getElementById('theme');
    if (!select) return;
    select.value = stored();
    select.addEventListener('change', function () {
      try { window.localStorage.setItem(KEY, select.value); } catch (e) { /* private mode */ }
      apply(select.value);
    });
  });
})();
