/*
 * The "Browser notifications" switch of the Preferences page: whether this
 * browser pops up critical and private notifications while the dashboard's
 * tab is in the background (views/desktop-notifier.js shows them).
 *
 * Turning it on asks the browser's permission, on that click and never
 * before; the line under the switch says honestly where things stand: on,
 * off, waiting for the browser's question, blocked by the browser (and how
 * to allow it), or impossible in this browser. Saved at once, in this
 * browser only: it is not part of the form above.
 */
(function (herald) {
  'use strict';

  var SAYS = {
    unsupported: herald.t('This browser cannot show notifications from web pages, so Herald shows them in the page only.'),
    insecure: herald.t('Browsers show notifications only for pages served over HTTPS (or from this computer); this page is not, so Herald shows them in the page only.'),
    on: herald.t('On in this browser.'),
    off: herald.t('Off.'),
    asking: herald.t('Your browser is asking whether Herald may show notifications: answer there.'),
    dismissed: herald.t('Not turned on: the browser’s question was closed without an answer. Turn the switch on to be asked again.'),
    blocked: herald.t('Blocked by this browser. To allow them, click the icon at the left of the address bar (site information or permissions), set Notifications to Allow for this site, then turn the switch on.')
  };

  herald.BrowserNotificationsView = Backbone.View.extend({
    events: {
      'change input[role=switch]': 'toggle'
    },

    initialize: function (options) {
      this.settings = (options && options.settings) || herald.desktopNotifications;
      this.watchPermission();
      this.render();
    },

    // Where things stand: 'unsupported', 'insecure', 'on', 'off' or 'blocked'.
    state: function () {
      if (window.isSecureContext === false) return 'insecure';
      var permission = this.settings.permission();
      if (permission === 'unsupported') return 'unsupported';
      if (permission === 'denied') return 'blocked';
      return this.settings.enabled() ? 'on' : 'off';
    },

    render: function (said) {
      var state = this.state();
      var impossible = state === 'unsupported' || state === 'insecure';
      this.$('input[role=switch]').prop({checked: state === 'on', disabled: impossible});
      this.$('.switch-status').attr('data-state', said || state).text(SAYS[said || state]);
      return this;
    },

    toggle: function (event) {
      var self = this, on = event.currentTarget.checked;
      if (!on) {
        self.settings.setWanted(false);
        return self.render();
      }
      self.settings.setWanted(true);
      if (self.settings.permission() === 'granted') return self.render();
      self.$('.switch-status').attr('data-state', 'asking').text(SAYS.asking);
      self.settings.request().then(function (permission) {
        if (permission !== 'granted') self.settings.setWanted(false);
        self.render(permission === 'default' ? 'dismissed' : undefined);
      });
    },

    // Allowed or blocked from the browser's site settings while the page is open: say so.
    watchPermission: function () {
      var self = this;
      if (!navigator.permissions || !navigator.permissions.query) return;
      navigator.permissions.query({name: 'notifications'}).then(function (status) {
        status.onchange = function () { self.render(); };
      }, function () { /* this browser does not tell */ });
    }
  });
})(window.herald = window.herald || {});
