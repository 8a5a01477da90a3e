/*
 * The user's topic subscriptions (one model per prefix, its id the prefix).
 *
 * Changes are asked of the dispatcher (`subscriptions:request`); the server's
 * acknowledgement comes back as `subscriptions:changed` with the full list,
 * which this collection then mirrors.
 */
(function (herald) {
  'use strict';

  herald.Subscriptions = Backbone.Collection.extend({
    comparator: 'id',

    initialize: function () {
      this.listenTo(herald.dispatcher, 'subscriptions:changed', this.mirror);
    },

    mirror: function (topics) {
      this.set(_.map(topics, function (topic) { return {id: topic}; }));
    },

    subscribe: function (topic) {
      herald.dispatcher.trigger('subscriptions:request', 'subscribe', [topic]);
    },

    unsubscribe: function (topic) {
      herald.dispatcher.trigger('subscriptions:request', 'unsubscribe', [topic]);
    }
  });
})(window.herald = window.herald || {});
