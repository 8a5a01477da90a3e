/*
 * A webhook endpoint, registered through /api/webhooks (the browser's session,
 * with the page's CSRF token on every change), and its deliveries' state
 * (pending, parked, last error, last success), refreshed by the page.
 */
(function (herald) {
  'use strict';

  herald.Webhook = Backbone.Model.extend({
    urlRoot: '/api/webhooks',
    defaults: {min_severity: 'info', 'private': false},

    // Deliver the parked ones again; the answer says how many.
    retryParked: function () {
      return $.ajax({url: this.url() + '/retry', method: 'POST', dataType: 'json'});
    }
  });

  herald.Webhooks = Backbone.Collection.extend({
    model: herald.Webhook,
    url: '/api/webhooks',
    parse: function (reply) { return reply.webhooks; }
  });
})(window.herald = window.herald || {});
