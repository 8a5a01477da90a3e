/*
 * The dashboard: the feed with its filters and detail, toasts, the unread
 * badge, subscriptions and (for admins) the publish form.
 *
 * What the page shows is in its URL: the filters and the open notification,
 * held by herald.DashboardRouter (routers/dashboard-router.js), so a view can
 * be shared or reloaded, and Back returns to the previous one.
 */
(function (herald) {
  'use strict';

  var HEADINGS = {feed: herald.t('Inbox'), archived: herald.t('Archived'), snoozed: herald.t('Snoozed')};
  var EMPTY = {
    feed: herald.t('Nothing here yet. Subscribe to a topic prefix to see its notifications arrive.'),
    archived: herald.t('Nothing archived. What you archive leaves the inbox and is kept here.'),
    snoozed: herald.t('Nothing snoozed. A snoozed notification comes back, unread, at the time you chose.')
  };

  $(function () {
    var config = herald.pageConfig();
    var router = new herald.DashboardRouter().start();
    var notifications = new herald.Notifications();
    notifications.criteria = router.filter;
    var subscriptions = new herald.Subscriptions();
    subscriptions.mirror(config.subscriptions);
    herald.notifications = notifications;
    herald.subscriptions = subscriptions;

    var feed = new herald.FeedView({el: '#feed', collection: notifications, empty: $('#feed-empty')});
    feed.tab = router.filter.tab;
    var bar = new herald.BulkBar({el: '#feed-bar', feed: feed}).render();
    var undo = new herald.UndoView({el: '#undo'});
    var help = document.getElementById('shortcuts');
    feed.on('did', function (text, inverse) { undo.offer(text, inverse); });
    $('#feed-bar').on('click', '.shortcuts', function () { help.showModal(); });
    var detail = new herald.DetailView({
      el: '#detail', collection: notifications, columns: $('#columns'), actions: feed.actions,
      groupOf: function (id) {
        var model = notifications.get(id);
        return model ? feed.byKey[feed.key(model)] : null;
      }
    });
    herald.FeedKeys({feed: feed, help: help, undo: undo, detail: detail});
    var filters = new herald.FiltersView({el: '#filters'}).show(router.filter);
    var toasts = new herald.ToastView({
      el: '#toasts', collection: notifications, keyOf: _.bind(feed.key, feed),
      // In the user's hands: the row open in the detail, or the list's current row while working in the list.
      inUse: function (model) {
        var open = router.open && notifications.get(router.open), key = feed.key(model);
        return Boolean(open && feed.key(open) === key) ||
          (key === feed.current && $.contains(feed.el, document.activeElement));
      }
    });
    herald.views = {
      feed: feed, detail: detail, filters: filters, toasts: toasts,
      badge: new herald.BadgeView({el: '#badge', collection: notifications, keyOf: _.bind(feed.key, feed)}),
      bar: bar, undo: undo,
      announcer: new herald.AnnouncerView({el: '#announcer', collection: notifications}),
      connection: new herald.ConnectionView({el: '#connection'}),
      subscriptions: new herald.SubscriptionsView({el: '#subscriptions', collection: subscriptions})
    };
    if (config.admin) {
      herald.views.publish = new herald.PublishView({el: '#publish', csrfToken: config.csrfToken});
    }

    var more = $('#load-more');
    var TAB_EMPTY = {
      foryou: herald.t('Nothing for you alone. Notifications addressed to you personally show here.'),
      activity: herald.t('No activity. Progress of jobs and other machine events show here, without counting as unread.')
    };
    // An empty inbox with subscriptions in place: what will arrive, not "subscribe".
    function inboxEmpty(view) {
      if (view !== 'feed' || !subscriptions.length) return null;
      return herald.t('Nothing yet. Notifications on {topics} show here as they arrive.',
                      {topics: subscriptions.pluck('id').join(', ')});
    }
    function showView(filter) {
      $('#feed-heading').text(HEADINGS[filter.view] + (filter.q ? ': “' + filter.q + '”' : ''));
      var filtered = filter.q || filter.severity || filter.topic || filter.unread;
      var words = _.compact([filter.view !== 'feed' && HEADINGS[filter.view], filter.q && '“' + filter.q + '”',
                             filter.severity && herald.severityWord(filter.severity), filter.topic,
                             filter.unread && herald.t('unread')]);
      $('#filters-box .filters-summary').text(words.length ? '(' + words.join(', ') + ')' : '');
      var empty = filtered ? herald.t('No notifications match these filters.') :
        (filter.view === 'feed' && TAB_EMPTY[filter.tab]) || inboxEmpty(filter.view) || EMPTY[filter.view];
      $('#feed-empty').data('text', empty);
      if (notifications.loaded !== false) $('#feed-empty').text(empty);
    }
    notifications.on('loading', function () {
      more.prop('hidden', true);  // the older pages of the view being loaded: once it is in
      $('#feed-empty').text(herald.t('Loading…'));
      feed.showEmpty();
    });
    notifications.on('loaded', function () {
      more.prop('hidden', !notifications.nextBefore);
      $('#feed-empty').text($('#feed-empty').data('text'));
      feed.showEmpty();
    });
    // A new subscription: its recent history joins the view at once.
    herald.dispatcher.on('subscribed', function () { notifications.load(router.filter); });
    subscriptions.on('update reset', function () { showView(router.filter); });
    function showTab(tab) {
      var filter = _.extend({}, router.filter, {tab: tab});
      router.filterBy(filter);
      filters.tab = tab;
      feed.showTab(tab);
      bar.showTab(tab);
      showView(filter);
    }
    bar.on('tab', showTab);
    notifications.on('load:error', function (error) {
      $('#feed-empty').text(herald.t('The feed could not be loaded: {why}', {why: herald.errorText(error)})).show();
    });
    more.on('click', function () {
      more.prop('disabled', true).text(herald.t('Loading…'));
      notifications.loadMore().then(function () {
        more.prop('disabled', false).text(herald.t('Load older notifications'));
      }, function (error) {
        more.prop('disabled', false).text(herald.t('Load older notifications (failed: {why})', {why: herald.errorText(error)}));
      });
    });
    showView(router.filter);
    // The search and filters are closed (their summary says which are in use), so the
    // list starts high; open when the page is shown with one in use.
    var f = router.filter;
    if (f.q || f.severity || f.topic || f.unread || f.view !== 'feed') {
      $('#filters-box').prop('open', true);
    }

    // Show or hide the detail as `id` says; openDetail also adds a history entry.
    function showDetail(id, options) {
      if (id) detail.show(id, options); else detail.hide();
      toasts.refresh();  // no toast for what the detail shows
    }
    function openDetail(id) {
      router.openItem(id);
      showDetail(id);
    }
    feed.on('open', openDetail);
    toasts.on('open', openDetail);
    detail.on('close', function (id) {
      openDetail(null);
      var item = feed.itemById(id).find('button.open');
      if (item.length) item.trigger('focus'); else $('#feed-heading').attr('tabindex', '-1').trigger('focus');
    });
    // The open detail follows the list's current row (detail-follow.js), in the URL in place.
    herald.DetailFollow({
      feed: feed, detail: detail,
      open: function (id) {
        router.openItem(id, true);
        showDetail(id, {focus: false});
      },
      close: function () { detail.close(); }
    });

    filters.on('filter', function (filter) {
      router.filterBy(filter);
      showView(filter);
      notifications.load(filter);
    });
    // Back and Forward: the filter first, then the open notification.
    router.on('filter', function (filter) {
      var tabOnly = _.isEqual(_.omit(filter, 'tab'), _.omit(notifications.criteria, 'tab'));
      filters.show(filter);
      feed.showTab(filter.tab);
      bar.showTab(filter.tab);
      showView(filter);
      if (!tabOnly) notifications.load(filter);
    });
    router.on('open', showDetail);

    herald.dispatcher.on('action:error', function (message) {
      $('#announcer').text(message);
    });

    herald.connectPage(config, {
      readState: true,
      // The first read, and again after a reset: the view in the URL.
      load: function () { return notifications.load(router.filter); }
    });
    if (router.open) showDetail(router.open);
  });
})(window.herald = window.herald || {});
