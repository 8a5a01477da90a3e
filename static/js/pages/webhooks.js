/*
 * The Webhooks page (admins): the endpoints Herald POSTs notifications to.
 */
(function (herald) {
  'use strict';

  $(function () {
    var config = herald.pageConfig();
    herald.connectPage(config, {snapshot: 1});  // for the connection indicator
    $.ajaxSetup({headers: {'X-CSRFToken': config.csrfToken}});
    var webhooks = new herald.Webhooks();
    herald.webhooks = webhooks;
    herald.views = {
      connection: new herald.ConnectionView({el: '#connection'}),
      page: new herald.WebhooksPageView({el: 'main', collection: webhooks})
    };
    webhooks.fetch();
  });
})(window.herald = window.herald || {});
