/*
 * The dashboard: the live feed, toasts, the unread badge, subscriptions and
 * (for admins) the publish form.
 */
(function (herald) {
  'use strict';

  var FEED_SIZE = 200;  // notifications kept in the feed; also the snapshot's size

  $(function () {
    var config = herald.pageConfig();
    herald.connectPage(config, {snapshot: FEED_SIZE, readState: true});
    var notifications = new herald.Notifications([], {limit: FEED_SIZE});
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
  });
})(window.herald = window.herald || {});
