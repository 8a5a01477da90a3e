// Sign-up: preselect the browser's own time zone (the user may pick another).
(function () {
  'use strict';
  var select = document.querySelector('select[data-detect]');
  var zone = window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone;
  for (var i = 0; select && zone && i < select.options.length; i++) {
    if (select.options[i].text === zone) select.selectedIndex = i;
  }
})();
