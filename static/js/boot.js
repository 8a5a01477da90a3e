/*
 * Starting a page: its configuration, and Herald's browser client.
 *
 * The dashboard's pages use the same client library that host apps load
 * (/client/herald.js): `herald.connectPage(config, options)` connects it
 * as the signed-in user, with the page's dispatcher (`herald.dispatcher`),
 * the cursor kept per user in localStorage, and a token renewed from the
 * signed-in session (/auth/session-token) before it expires, so a page left
 * open for days still reconnects. The client starts on the next tick: the
 * page builds its collections and views right after, and they hear all of it.
 */
(function (herald) {
  'use strict';

  // A fresh token for the signed-in session.
  function sessionToken() {
    return fetch('/auth/session-token', {credentials: 'same-origin', cache: 'no-store'})
      .then(function (response) {
        if (!response.ok) throw new Error('HTTP ' + response.status);
        return response.json();
      })
      .then(function (reply) { return reply.token; });
  }

  // Options: snapshot (how many of the newest notifications to load over REST
  // first, and after a reset) or load (the page's own first read, see
  // Herald.connect), readState (fetch it on every connect).
  herald.connectPage = function (config, options) {
    options = options || {};
    herald.client = Herald.connect({
      token: config.token,
      tokenTtl: config.tokenTtl,
      getToken: sessionToken,
      user: config.user,
      remember: true,
      snapshot: options.snapshot || 0,
      load: options.load,
      readState: Boolean(options.readState),
      dispatcher: herald.dispatcher
    });
    return herald.client;
  };

  // The page's configuration, rendered by the server into a JSON script tag.
  herald.pageConfig = function () {
    return JSON.parse(document.getElementById('herald-config').textContent);
  };
})(window.herald = window.herald || {});
