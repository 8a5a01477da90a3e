/*
 * The dashboard's URL: what the page shows is in its query string, the
 * tab (`tab`: inbox, foryou, activity), the filters (`view`, `q`,
 * `severity`, `topic`, `unread`) and the open
 * notification (`n`), so a view can be shared or reloaded, and Back returns
 * to the previous one.
 *
 * The router holds what the URL says: `filter` (as herald.parseFilter gives
 * it) and `open` (a notification id, or null). `filterBy(filter)` and
 * `openItem(id)` change it and add a history entry (`openItem(id, true)`:
 * in place of the current one, as the detail following j/k does); when Back or Forward
 * change it, the router triggers `filter` (with the filter) and then `open`
 * (with the id, or null), each only when that part changed.
 */
(function (herald) {
  'use strict';

  var KEYS = ['tab', 'view', 'q', 'severity', 'topic', 'unread'];

  // What a query string ("?q=disk&n=1700000000000-0") says: {filter, open}.
  function parse(search) {
    var params = new URLSearchParams(search), raw = {};
    _.each(KEYS, function (key) { raw[key] = params.get(key) || ''; });
    return {filter: herald.parseFilter(raw), open: params.get('n')};
  }

  // The query string for `filter` and `open`: '?...', or '' for the plain inbox.
  function queryFor(filter, open) {
    var params = new URLSearchParams();
    _.each(KEYS, function (key) {
      if (filter[key] && !(key === 'view' && filter[key] === 'feed') && !(key === 'tab' && filter[key] === 'inbox')) {
        params.set(key, filter[key]);
      }
    });
    if (open) params.set('n', open);
    var query = params.toString();
    return query ? '?' + query : '';
  }

  herald.DashboardRouter = Backbone.Router.extend({
    // The page's own path, with or without a query string.
    routes: {
      '': 'visit'
    },

    initialize: function () {
      var state = parse(window.location.search);
      this.filter = state.filter;
      this.open = state.open;
    },

    // Follow the URL from now on (before any filterBy or openItem). The page's
    // path is the root, as it is (with its trailing slash or without); the
    // hash is no part of the state (the skip link uses it).
    start: function () {
      var path = window.location.pathname;
      Backbone.history.start({
        pushState: true, hashChange: false, silent: true,
        root: path.replace(/\/?$/, '/'), trailingSlash: path.slice(-1) === '/'
      });
      return this;
    },

    filterBy: function (filter) {
      this.filter = filter;
      this.push();
    },

    openItem: function (id, replace) {
      this.open = id;
      if (replace) this.navigate(queryFor(this.filter, this.open), {replace: true});
      else this.push();
    },

    // A new history entry for the state now. Backbone's navigate makes none
    // when the URL stays the same; here every filter or open asked for is an
    // entry of its own, the same view asked for twice included.
    push: function () {
      var query = queryFor(this.filter, this.open), before = window.location.href;
      this.navigate(query);
      if (window.location.href === before) {
        window.history.pushState(null, '', window.location.pathname + query);
      }
    },

    // Back or Forward: say what changed.
    visit: function () {
      var next = parse(window.location.search);
      if (!_.isEqual(next.filter, this.filter)) {
        this.filter = next.filter;
        this.trigger('filter', next.filter);
      }
      if (next.open !== this.open) {
        this.open = next.open;
        this.trigger('open', next.open);
      }
    }
  });
})(window.herald = window.herald || {});
