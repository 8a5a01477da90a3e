/*
 * The dashboard: the feed with its filters and detail, toasts, the unread
 * badge, subscriptions and (for admins) the publish form.
 *
 * What the page shows is in its URL: the filters (`q`, `view`, `severity`,
 * `topic`, `unread`) and the open notification (`n`), so a view can be
 * shared or reloaded, and Back returns to the previous one.
 */
(function (herald) {
  'use strict';

  var KEYS = ['view', 'q', 'severity', 'topic', 'unread'];
  var HEADINGS = {feed: 'Inbox', archived: 'Archived', snoozed: 'Snoozed'};
  var EMPTY = {
    feed: 'Nothing here yet. Subscribe to a topic prefix to see its notifications arrive.',
    archived: 'Nothing archived. What you archive leaves the inbox and is kept here.',
    snoozed: 'Nothing snoozed. A snoozed notification comes back, unread, at the time you chose.'
  };

  function urlState() {
    var params = new URLSearchParams(window.location.search), raw = {};
    _.each(KEYS, function (key) { raw[key] = params.get(key) || ''; });
    return {filter: herald.parseFilter(raw), open: params.get('n')};
  }

  function urlFor(filter, open) {
    var params = new URLSearchParams();
    _.each(KEYS, function (key) {
      if (filter[key] && !(key === 'view' && filter[key] === 'feed')) params.set(key, filter[key]);
    });
    if (open) params.set('n', open);
    var query = params.toString();
    return window.location.pathname + (query ? '?' + query : '');
  }

  $(function () {
    var config = herald.pageConfig();
    var state = urlState();
    var notifications = new herald.Notifications();
    notifications.criteria = state.filter;
    var subscriptions = new herald.Subscriptions();
    subscriptions.mirror(config.subscriptions);
    herald.notifications = notifications;
    herald.subscriptions = subscriptions;

    var feed = new herald.FeedView({el: '#feed', collection: notifications, empty: $('#feed-empty')});
    var detail = new herald.DetailView({el: '#detail', collection: notifications, columns: $('#columns')});
    var filters = new herald.FiltersView({el: '#filters'}).show(state.filter);
    var toasts = new herald.ToastView({el: '#toasts', collection: notifications});
    herald.views = {
      feed: feed, detail: detail, filters: filters, toasts: toasts,
      badge: new herald.BadgeView({el: '#badge', collection: notifications}),
      announcer: new herald.AnnouncerView({el: '#announcer', collection: notifications}),
      connection: new herald.ConnectionView({el: '#connection'}),
      subscriptions: new herald.SubscriptionsView({el: '#subscriptions', collection: subscriptions})
    };
    if (config.admin) {
      herald.views.publish = new herald.PublishView({el: '#publish', csrfToken: config.csrfToken});
    }

    var more = $('#load-more');
    function showView(filter) {
      $('#feed-heading').text(HEADINGS[filter.view] + (filter.q ? ': “' + filter.q + '”' : ''));
      var filtered = filter.q || filter.severity || filter.topic || filter.unread;
      $('#feed-empty').text(filtered ? 'No notifications match these filters.' : EMPTY[filter.view]);
    }
    notifications.on('loaded', function () { more.prop('hidden', !notifications.nextBefore); });
    notifications.on('load:error', function (error) {
      $('#feed-empty').text('The feed could not be loaded: ' + error.message).show();
    });
    more.on('click', function () {
      more.prop('disabled', true).text('Loading…');
      notifications.loadMore().then(function () {
        more.prop('disabled', false).text('Load older notifications');
      }, function (error) {
        more.prop('disabled', false).text('Load older notifications (failed: ' + error.message + ')');
      });
    });
    showView(state.filter);

    // Open or close the detail as `open` says; `push` adds a history entry.
    function openDetail(id, push) {
      state.open = id;
      if (push) window.history.pushState(null, '', urlFor(state.filter, id));
      if (id) detail.show(id); else detail.hide();
    }
    feed.on('open', function (id) { openDetail(id, true); });
    toasts.on('open', function (id) { openDetail(id, true); });
    detail.on('close', function (id) {
      openDetail(null, true);
      var item = feed.itemById(id).find('button.open');
      if (item.length) item.trigger('focus'); else $('#feed-heading').attr('tabindex', '-1').trigger('focus');
    });
    notifications.on('remove', function (model) {
      if (state.open === model.id && detail.envelope) detail.render();
    });

    filters.on('filter', function (filter) {
      state.filter = filter;
      window.history.pushState(null, '', urlFor(filter, state.open));
      showView(filter);
      notifications.load(filter);
    });
    window.addEventListener('popstate', function () {
      var next = urlState();
      if (!_.isEqual(next.filter, state.filter)) {
        state.filter = next.filter;
        filters.show(next.filter);
        showView(next.filter);
        notifications.load(next.filter);
      }
      if (next.open !== state.open) openDetail(next.open, false);
    });

    herald.dispatcher.on('action:error', function (message) {
      $('#announcer').text(message);
    });

    herald.connectPage(config, {
      readState: true,
      // The first read, and again after a reset: the view in the URL.
      load: function () { return notifications.load(state.filter); }
    });
    if (state.open) openDetail(state.open, false);
  });
})(window.herald = window.herald || {});
