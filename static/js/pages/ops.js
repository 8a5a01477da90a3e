/*
 * The Operations page (admins): the whole deployment's state, refreshed from
 * /api/ops/status every few seconds, and who is online, live from the
 * socket's `presence` events (asked for again on every connect).
 */
(function (herald) {
  'use strict';

  $(function () {
    var config = herald.pageConfig();
    herald.connectPage(config, {snapshot: 1});  // for the connection indicator and presence
    var status = new herald.OpsStatus();
    herald.ops = status;
    herald.views = {
      connection: new herald.ConnectionView({el: '#connection'}),
      page: new herald.OpsView({el: 'main', model: status})
    };
    herald.dispatcher.on('connected', function () {
      herald.client.watchPresence().catch(function () { /* the next refresh shows it */ });
    });
    herald.dispatcher.on('presence', function (change) { status.presenceChanged(change); });
    status.fetch();
  });
})(window.herald = window.herald || {});
