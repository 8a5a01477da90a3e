/*
 * The connection indicator: connecting, connected, reconnecting or offline,
 * and "degraded" (connected, Redis unreachable) while the server says it
 * cannot reach Redis (`status`): a live socket to a server without its
 * database is not "connected" as people mean it. The status banner
 * (status-banner.js) says the rest.
 */
(function (herald) {
  'use strict';

  var STATES = {connecting: herald.t('connecting'), connected: herald.t('connected'),
                reconnecting: herald.t('reconnecting'), offline: herald.t('offline')};

  herald.ConnectionView = Backbone.View.extend({
    initialize: function () {
      this.socket = this.$el.attr('data-state') || 'connecting';
      this.redis = 'up';
      this.listenTo(herald.dispatcher, 'connection', function (state) {
        this.socket = state;
        this.render();
      });
      this.listenTo(herald.dispatcher, 'status', function (status) {
        this.redis = status.redis;
        this.render();
      });
    },

    render: function () {
      var degraded = this.socket === 'connected' && this.redis === 'down';
      this.$el.attr('data-state', degraded ? 'degraded' : this.socket)
        .text(degraded ? herald.t('connected, Redis unreachable') : (STATES[this.socket] || this.socket));
      return this;
    }
  });
})(window.herald = window.herald || {});
