/*
 * The connection indicator: connected, reconnecting or offline.
 */
(function (herald) {
  'use strict';

  herald.ConnectionView = Backbone.View.extend({
    initialize: function () {
      this.listenTo(herald.dispatcher, 'connection', this.render);
    },

    render: function (state) {
      this.$el.attr('data-state', state).text(state);
      return this;
    }
  });
})(window.herald = window.herald || {});
