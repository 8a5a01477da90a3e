/*
 * Starting a page: REST first, then the socket, with no gap between them.
 *
 * `herald.boot(config, page)` loads the read state (if the page wants it)
 * and the newest notifications of the user's feed over REST, hands them to
 * `page.snapshot(list)`, then connects the socket from where that snapshot
 * ended. On `reset` (the server's history no longer reaches back to us) the
 * snapshot is loaded again; on every (re)connect the read state is synced.
 */
(function (herald) {
  'use strict';

  herald.boot = function (config, page) {
    var size = page.snapshotSize || 200;

    // Resolves with the snapshot's stream cursor ("0-0" for an empty history).
    function loadSnapshot() {
      return herald.api.snapshot(size).then(function (reply) {
        page.snapshot(reply.notifications);
        return reply.last_id || '0-0';
      });
    }

    function syncReadState() {
      if (!page.readState) return $.Deferred().resolve().promise();
      return herald.api.readState().done(page.readState);
    }

    herald.dispatcher.on('reset', function () {
      loadSnapshot().done(function (cursor) { herald.dispatcher.trigger('cursor', cursor); });
    });
    herald.dispatcher.on('connected', syncReadState);

    syncReadState().always(function () {
      loadSnapshot()
        .done(function (cursor) { herald.socket = herald.connect(config, cursor); })
        .fail(function () { herald.socket = herald.connect(config, null); });
    });
  };

  // The page's configuration, rendered by the server into a JSON script tag;
  // reading it also readies the REST client, so views may fetch at once.
  herald.pageConfig = function () {
    var config = JSON.parse(document.getElementById('herald-config').textContent);
    herald.api.init(config);
    return config;
  };
})(window.herald = window.herald || {});
