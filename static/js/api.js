/*
 * REST calls the page makes with the user's token: the feed snapshot and
 * the read state. `herald.tokens` keeps a token fresh enough to use: the
 * page's own at first, then one fetched from the signed-in session once it
 * is half-way to expiry (so a page left open for days still connects).
 */
(function (herald) {
  'use strict';

  function TokenSource(config) {
    this.token = config.token;
    this.ttl = (config.tokenTtl || 3600) * 1000;
    this.issued = Date.now();
  }

  TokenSource.prototype.get = function (callback) {
    var self = this;
    if (Date.now() - self.issued < self.ttl / 2) return callback(self.token);
    $.getJSON('/auth/session-token')
      .done(function (reply) {
        self.token = reply.token;
        self.ttl = reply.expires_in * 1000;
        self.issued = Date.now();
      })
      .always(function () { callback(self.token); });
  };

  TokenSource.prototype.expire = function () {
    this.issued = 0;
  };

  // GET `path` with the bearer token; returns a jQuery promise of the JSON.
  function getJSON(path, params) {
    var deferred = $.Deferred();
    herald.tokens.get(function (token) {
      $.ajax({url: path, data: params, dataType: 'json',
              headers: {Authorization: 'Bearer ' + token}})
        .done(deferred.resolve).fail(deferred.reject);
    });
    return deferred.promise();
  }

  herald.api = {
    init: function (config) {
      herald.tokens = new TokenSource(config);
    },
    // The newest `limit` notifications of the user's feed, and the stream cursor.
    snapshot: function (limit) {
      return getJSON('/api/notifications', {limit: limit});
    },
    readState: function () {
      return getJSON('/api/read-state');
    },
    // The latest Spark rollup's summary (admins).
    rollup: function () {
      return getJSON('/api/spark/rollup');
    }
  };
})(window.herald = window.herald || {});
