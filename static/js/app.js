/*
 * Boots the dashboard: reads the page's configuration, builds the
 * collections and views, then connects the socket.
 */
(function (herald) {
  'use strict';

  $(function () {
    var config = JSON.parse(document.getElementById('herald-config').textContent);
    var notifications = new herald.Notifications([], {limit: 200});
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
    herald.socket = herald.connect(config);
  });
})(window.herald = window.herald || {});
