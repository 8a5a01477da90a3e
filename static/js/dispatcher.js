/*
 * The event dispatcher: the one place notifications enter the page.
 *
 * socket.js triggers `notification` and `notification:<topic>` for every
 * notification, and `connection` with the connection state; collections and
 * views listen here and never to the socket itself.
 */
(function (herald) {
  'use strict';
  herald.dispatcher = _.clone(Backbone.Events);
})(window.herald = window.herald || {});
