/*
 * Herald: connect this page (the only Herald code every page runs). The page's
 * `{{ herald_scripts() }}` block carries Herald's address, a token and the
 * cursor the page's content is as of, so that the connection replays what was
 * published since, even when Herald was away as the page loaded.
 * Everything else listens to DOM events (`herald:<topic>` on the body).
 */
(function () {
  'use strict';

  var LABELS = {connecting: 'Connecting', connected: 'Live', reconnecting: 'Reconnecting',
                offline: 'Offline'};
  var herald = Herald.connect(Herald.pageOptions());
  var live = document.getElementById('live');

  herald.on('connection', function (state) {
    live.setAttribute('data-state', state);
    live.textContent = LABELS[state] || state;
  });
})();
