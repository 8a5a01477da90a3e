/*
 * The event dispatcher: the one place notifications enter the page.
 *
 * Herald's client (/client/herald.js, see boot.js) triggers `notification`
 * and `notification:<topic>` for every notification, `snapshot`, `read`,
 * `subscriptions` and `connection` here; collections and views listen here
 * and never to the socket itself.
 */
(function (herald) {
  'use strict';
  herald.dispatcher = _.clone(Backbone.Events);
})(window.herald = window.herald || {});
