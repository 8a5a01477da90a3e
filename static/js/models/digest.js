/*
 * An email digest subscription, saved through /api/digests (the browser's
 * session, with the page's CSRF token on every change).
 */
(function (herald) {
  'use strict';

  herald.Digest = Backbone.Model.extend({
    urlRoot: '/api/digests',
    defaults: {min_severity: 'info', schedule: 'daily@08:00', timezone: 'UTC',
               enabled: true, critical_now: false},

    // The fields the API takes, without the server's own (id, created).
    payload: function () {
      return _.pick(this.attributes, 'email', 'topics', 'min_severity', 'schedule',
                    'timezone', 'enabled', 'critical_now');
    }
  });

  herald.Digests = Backbone.Collection.extend({
    model: herald.Digest,
    url: '/api/digests',
    parse: function (reply) { return reply.digests; }
  });
})(window.herald = window.herald || {});
