/*
 * Browser notifications for critical and private items while the tab is
 * hidden (opt-in from Preferences). Being built: see issue 25.
 */
(function (herald) {
  'use strict';
})(window.herald = window.herald || {});
