/*
 * The Socket.IO connection to `/notifications`, and its bridge to the dispatcher.
 *
 * Every notification is pumped into the dispatcher as `notification` and as
 * `notification:<topic>`, whether it came alone (`notification`) or in a
 * batch (`notifications`). The connection state goes out as `connection`
 * with 'connected', 'reconnecting' or 'offline'. Subscription requests come
 * in as `subscriptions:request` and their acks go out as
 * `subscriptions:changed` or `subscriptions:error`.
 */
(function (herald) {
  'use strict';

  var dispatcher = herald.dispatcher;

  // Keeps a token fresh enough to connect with: the page's own at first, then
  // one fetched from the signed-in session once it is half-way to expiry.
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

  function pump(envelope) {
    dispatcher.trigger('notification', envelope);
    dispatcher.trigger('notification:' + envelope.topic, envelope);
  }

  herald.connect = function (config) {
    var tokens = new TokenSource(config);
    var socket = io('/notifications', {
      transports: ['websocket', 'polling'],
      auth: function (callback) {
        tokens.get(function (token) { callback({token: token}); });
      }
    });
    var state = function (name) { dispatcher.trigger('connection', name); };

    socket.on('connect', function () {
      state('connected');
      // An empty subscribe changes nothing and answers with the full list.
      socket.emit('subscribe', {topics: []}, function (ack) {
        if (ack && ack.ok) dispatcher.trigger('subscriptions:changed', ack.topics);
      });
    });
    socket.on('disconnect', function (reason) {
      if (reason === 'io client disconnect') return state('offline');
      state('reconnecting');
      // The server closed us on purpose: socket.io will not retry by itself.
      if (reason === 'io server disconnect') socket.connect();
    });
    socket.on('connect_error', function (error) {
      if (socket.active) return state('reconnecting');
      // Refused at connect (e.g. an expired token): retry once with a fresh one.
      if (/^unauthorized/.test(error.message) && !socket.retriedAuth) {
        socket.retriedAuth = true;
        tokens.expire();
        state('reconnecting');
        return socket.connect();
      }
      state('offline');
    });
    socket.io.on('reconnect_attempt', function () { state('reconnecting'); });
    socket.io.on('reconnect_failed', function () { state('offline'); });
    socket.on('connect', function () { socket.retriedAuth = false; });

    socket.on('notification', pump);
    socket.on('notifications', function (list) { _.each(list, pump); });
    socket.on('reset', function () { dispatcher.trigger('reset'); });

    dispatcher.on('subscriptions:request', function (action, topics) {
      socket.emit(action, {topics: topics}, function (ack) {
        if (ack && ack.ok) dispatcher.trigger('subscriptions:changed', ack.topics);
        else dispatcher.trigger('subscriptions:error', (ack && ack.error) || 'no answer');
      });
    });

    window.addEventListener('offline', function () { state('offline'); });
    window.addEventListener('online', function () {
      state(socket.connected ? 'connected' : 'reconnecting');
    });
    return socket;
  };
})(window.herald = window.herald || {});
