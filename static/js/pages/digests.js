/*
 * The Digests page (admins): their email digest subscriptions.
 */
(function (herald) {
  'use strict';

  $(function () {
    var config = herald.pageConfig();
    herald.connectPage(config, {snapshot: 1});  // for the connection indicator
    $.ajaxSetup({headers: {'X-CSRFToken': config.csrfToken}});
    var digests = new herald.Digests();
    herald.digests = digests;
    herald.views = {
      connection: new herald.ConnectionView({el: '#connection'}),
      page: new herald.DigestsPageView({el: 'main', collection: digests})
    };
    digests.fetch();
  });
})(window.herald = window.herald || {});
