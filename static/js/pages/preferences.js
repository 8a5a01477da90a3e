/*
 * The preferences page: how the signed-in user wants to be told (email,
 * saved with the account), and whether this browser pops up notifications
 * (kept by the browser).
 */
(function (herald) {
  'use strict';

  $(function () {
    var config = herald.pageConfig();
    herald.connectPage(config, {});
    herald.views = {
      connection: new herald.ConnectionView({el: '#connection'}),
      preferences: new herald.PreferencesView({el: '#preferences'}),
      browserNotifications: new herald.BrowserNotificationsView({el: '#browser-notifications'})
    };
    herald.client.get('/api/preferences').then(function (prefs) {
      herald.views.preferences.show(prefs);
    }, function (error) {
      $('#preferences .status').addClass('error').text(herald.t('Your preferences could not be loaded: {why}', {why: herald.errorText(error)}));
    });
  });
})(window.herald = window.herald || {});
