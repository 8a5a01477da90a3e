/*
 * The user's topic subscriptions (one model per prefix, its id the prefix).
 *
 * Changes are asked of Herald's client; the server's acknowledgement comes
 * back through the dispatcher as `subscriptions` with the full list, which
 * this collection then mirrors.
 */
(function (herald) {
  'use strict';

  herald.Subscriptions = Backbone.Collection.extend({
    comparator: 'id',

    initialize: function () {
      this.listenTo(herald.dispatcher, 'subscriptions', this.mirror);
    },

    mirror: function (topics) {
      this.set(_.map(topics, function (topic) { return {id: topic}; }));
    },

    // Errors reach the dispatcher as `subscriptions:error`.
    subscribe: function (topic) {
      herald.client.subscribe([topic]).catch(function () {});
    },

    unsubscribe: function (topic) {
      herald.client.unsubscribe([topic]).catch(function () {});
    }
  });
})(window.herald = window.herald || {});
