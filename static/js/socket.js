/*
 * The Socket.IO connection to `/notifications`, and its bridge to the dispatcher.
 *
 * Every notification is pumped into the dispatcher as `notification` and as
 * `notification:<topic>`, whether it came alone (`notification`) or in a
 * batch (`notifications`). The connection state goes out as `connection`
 * with 'connected', 'reconnecting' or 'offline'; the server's `reset` and
 * `read` events go out under the same names. Requests come in as
 * `subscriptions:request` and `read:request`.
 *
 * The socket remembers the newest id it has seen (also in localStorage, per
 * user) and sends it as `last_id` on every reconnect, so the server replays
 * exactly what was missed.
 */
(function (herald) {
  'use strict';

  var dispatcher = herald.dispatcher;

  // The newest notification id seen, kept per user in localStorage.
  function Cursor(user, start) {
    this.key = 'herald.lastId.' + user;
    this.value = null;
    this.advance(start || this.stored());
  }

  Cursor.prototype.stored = function () {
    try { return window.localStorage.getItem(this.key); } catch (e) { return null; }
  };

  Cursor.prototype.advance = function (id) {
    if (!id || (this.value && herald.compareIds(id, this.value) <= 0)) return;
    this.value = id;
    try { window.localStorage.setItem(this.key, id); } catch (e) { /* private mode */ }
  };

  herald.connect = function (config, lastId) {
    var cursor = new Cursor(config.user, lastId);
    var socket = io('/notifications', {
      transports: ['websocket', 'polling'],
      // Retry soon after a restart; the randomisation spreads the herd.
      reconnectionDelay: 500,
      reconnectionDelayMax: 3000,
      auth: function (callback) {
        herald.tokens.get(function (token) {
          var auth = {token: token};
          if (cursor.value) auth.last_id = cursor.value;
          callback(auth);
        });
      }
    });
    var state = function (name) { dispatcher.trigger('connection', name); };
    var pump = function (envelope) {
      cursor.advance(envelope.id);
      dispatcher.trigger('notification', envelope);
      dispatcher.trigger('notification:' + envelope.topic, envelope);
    };

    socket.on('connect', function () {
      socket.retriedAuth = false;
      state('connected');
      // An empty subscribe changes nothing and answers with the full list.
      socket.emit('subscribe', {topics: []}, function (ack) {
        if (ack && ack.ok) dispatcher.trigger('subscriptions:changed', ack.topics);
      });
      dispatcher.trigger('connected');
    });
    socket.on('disconnect', function (reason) {
      if (reason === 'io client disconnect') return state('offline');
      state('reconnecting');
      // The server closed us on purpose (e.g. too slow): socket.io will not retry by itself.
      if (reason === 'io server disconnect') socket.connect();
    });
    socket.on('connect_error', function (error) {
      if (socket.active) return state('reconnecting');
      // Refused at connect (e.g. an expired token): retry once with a fresh one.
      if (/^unauthorized/.test(error.message) && !socket.retriedAuth) {
        socket.retriedAuth = true;
        herald.tokens.expire();
        state('reconnecting');
        return socket.connect();
      }
      state('offline');
    });
    socket.io.on('reconnect_attempt', function () { state('reconnecting'); });
    socket.io.on('reconnect_failed', function () { state('offline'); });

    socket.on('notification', pump);
    socket.on('notifications', function (list) { _.each(list, pump); });
    socket.on('reset', function () { dispatcher.trigger('reset'); });
    socket.on('read', function (change) { dispatcher.trigger('read', change); });

    dispatcher.on('subscriptions:request', function (action, topics) {
      socket.emit(action, {topics: topics}, function (ack) {
        if (ack && ack.ok) dispatcher.trigger('subscriptions:changed', ack.topics);
        else dispatcher.trigger('subscriptions:error', (ack && ack.error) || 'no answer');
      });
    });
    dispatcher.on('read:request', function (change) {
      socket.emit('read', change);
    });
    dispatcher.on('cursor', function (id) { cursor.advance(id); });

    window.addEventListener('offline', function () { state('offline'); });
    window.addEventListener('online', function () {
      state(socket.connected ? 'connected' : 'reconnecting');
    });
    return socket;
  };
})(window.herald = window.herald || {});
