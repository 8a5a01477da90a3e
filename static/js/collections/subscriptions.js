/*
 * The user's topic subscriptions (one model per prefix, its id the prefix).
 *
 * Changes are asked of Herald's client; the server's acknowledgement comes
 * back through the dispatcher as `subscriptions` with the full list, which
 * this collection then mirrors. A subscribe that added prefixes is then
 * announced as `subscribed` `{added: [prefixes]}` on the dispatcher, so that
 * the feed can show their history at once.
 *
 * It also knows the topics of the recent history (`GET /api/topics`, loaded
 * by `loadKnown`: `known` is then `{topics, prefixes, scanned}`, and the
 * collection triggers `known`), which the subscription box suggests.
 */
(function (herald) {
  'use strict';

  var KNOWN_FRESH_MS = 60 * 1000;  // how long loaded topics are good for

  herald.Subscriptions = Backbone.Collection.extend({
    comparator: 'id',

    initialize: function () {
      this.known = null;
      this.knownAt = 0;
      this.loadingKnown = null;
      this.listenTo(herald.dispatcher, 'subscriptions', this.mirror);
    },

    mirror: function (topics) {
      this.set(_.map(topics, function (topic) { return {id: topic}; }));
    },

    // Errors reach the dispatcher as `subscriptions:error`.
    subscribe: function (topic) {
      var before = this.pluck('id');
      return herald.client.subscribe([topic]).then(function () {
        var added = _.difference([topic], before);
        if (added.length) herald.dispatcher.trigger('subscribed', {added: added});
        return added;
      });  // a failure: rejected (the panel keeps what was typed and says why)
    },

    unsubscribe: function (topic) {
      herald.client.unsubscribe([topic]).catch(function () {});
    },

    // Load the known topics (again, when those held are older than a minute);
    // a promise of `known`, null when they could not be had (suggestions are
    // a help, not a need: the box works without them).
    loadKnown: function () {
      var self = this;
      if (self.loadingKnown) return self.loadingKnown;
      if (self.known && Date.now() - self.knownAt < KNOWN_FRESH_MS) return Promise.resolve(self.known);
      if (!herald.client) return Promise.resolve(self.known);
      self.loadingKnown = herald.client.get('/api/topics').then(function (reply) {
        self.known = {topics: reply.topics || [], prefixes: reply.prefixes || [],
                      scanned: reply.scanned || 0};
        self.knownAt = Date.now();
        self.trigger('known', self.known);
        return self.known;
      }, function () {
        return self.known;
      }).then(function (known) {
        self.loadingKnown = null;
        return known;
      });
      return self.loadingKnown;
    },

    // The names one could subscribe to, each once: `{name, count, prefix}`
    // (`prefix`: other topics lie under it; `count`: what subscribing to it
    // matches), the most frequent first.
    choices: function () {
      if (!this.known) return [];
      var byName = {};
      _.each(this.known.topics, function (t) {
        byName[t.topic] = {name: t.topic, count: t.count, prefix: false};
      });
      _.each(this.known.prefixes, function (p) {
        byName[p.prefix] = {name: p.prefix, count: p.count, prefix: true};
      });
      return _.values(byName).sort(function (a, b) {
        return b.count - a.count || (a.name < b.name ? -1 : 1);
      });
    },

    // Whether the user's subscriptions already cover `name`.
    covers: function (name) {
      return herald.covers(this.pluck('id'), name);
    }
  });
})(window.herald = window.herald || {});
