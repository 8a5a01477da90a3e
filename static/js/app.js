/*
 * Boots the dashboard: reads the page's configuration, builds the
 * collections and views, loads the recent history and the read state over
 * REST, then connects the socket from where that snapshot ended, so the
 * page goes live with no gap.
 */
(function (herald) {
  'use strict';

  var SNAPSHOT = 200;  // notifications loaded on open; also the feed's length

  $(function () {
    var config = JSON.parse(document.getElementById('herald-config').textContent);
    herald.api.init(config);
    var notifications = new herald.Notifications([], {limit: SNAPSHOT});
    var subscriptions = new herald.Subscriptions();
    subscriptions.mirror(config.subscriptions);

    herald.views = {
      feed: new herald.FeedView({el: '#feed', collection: notifications, empty: $('#feed-empty')}),
      toasts: new herald.ToastView({el: '#toasts', collection: notifications}),
      badge: new herald.BadgeView({el: '#badge', collection: notifications}),
      connection: new herald.ConnectionView({el: '#connection'}),
      subscriptions: new herald.SubscriptionsView({el: '#subscriptions', collection: subscriptions})
    };
    if (config.admin) {
      herald.views.publish = new herald.PublishView({el: '#publish', csrfToken: config.csrfToken});
    }
    herald.notifications = notifications;
    herald.subscriptions = subscriptions;

    // Resolves with the snapshot's stream cursor ("0-0" for an empty history).
    function loadSnapshot() {
      return herald.api.snapshot(SNAPSHOT).then(function (reply) {
        notifications.receiveAll(reply.notifications);
        return reply.last_id || '0-0';
      });
    }

    function syncReadState() {
      return herald.api.readState().done(_.bind(notifications.applyRead, notifications));
    }

    // The server lost track of us (we were away longer than its history): reload.
    herald.dispatcher.on('reset', function () {
      loadSnapshot().done(function (cursor) { herald.dispatcher.trigger('cursor', cursor); });
    });
    // Reads made in other tabs while we were disconnected.
    herald.dispatcher.on('connected', syncReadState);

    syncReadState().always(function () {
      loadSnapshot()
        .done(function (cursor) { herald.socket = herald.connect(config, cursor); })
        .fail(function () { herald.socket = herald.connect(config, null); });
    });
  });
})(window.herald = window.herald || {});
