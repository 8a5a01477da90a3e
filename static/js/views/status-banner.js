/*
 * The status banner, at the top of every signed-in page (templates/base.html):
 * when Herald or its Redis cannot be reached it says so in plain words, what
 * still works, and when the next try comes, with "Retry now"; it is empty, and
 * takes no room, while all is well.
 *
 * It hears the page's dispatcher (herald.js): `connection` (the socket's
 * state), `retrying` ({at, reason}: when the client tries again, and why the
 * server refused, if it did), `status` ({redis, since}: the server cannot
 * reach Redis) and `error` (refused for good). A reconnect that succeeds
 * within GRACE ms shows nothing: a blip is not news.
 *
 * The outage page (a page asked for while Redis was unreachable, 503, with
 * data-problem="outage") has no socket: there the banner asks for the page
 * again (HEAD) after a growing, jittered delay (a thousand open tabs do not
 * come back at once), and loads it once it can be had.
 *
 * What it says goes into a live region (role=status) only when the problem
 * changes; the countdown beside it is not announced every second.
 *
 * Views ask it whether a change can be saved now (`herald.unsaved()`: while Redis is
 * known to be away, the error to show at once), and hear `recovered` on the
 * dispatcher when a problem it showed is over (to clear their notes and redo).
 */
(function (herald) {
  'use strict';

  var GRACE = 1500;  // ms a reconnect may take before the banner speaks up
  var OUTAGE_DELAYS = [2, 4, 8, 10];  // s between the outage page's tries (jittered: 50-100%)
  var t = herald.t;  // the page's language (i18n.js)
  var WORKS = t('You can keep reading what is shown; new notifications and actions will resume when it is back.');

  // What each problem says: a title, then what still works (or what to do).
  var SAY = {
    server: [t('Offline: Herald cannot be reached.'), WORKS],
    device: [t('Offline: this device has no network.'), WORKS],
    refused: [t('Herald refused this connection.'), t('Reload the page, or sign in again.')],
    busy: [t('Herald is busy and asked this page to come back shortly.'), WORKS],
    redis: [t('Herald cannot reach its database (Redis).'), WORKS],
    outage: [t('Herald cannot reach its database (Redis).'),
             t('Nothing you saved is lost: this page appears by itself as soon as Redis answers.')]
  };

  function clock(ms) {
    return new Date(ms).toLocaleTimeString(herald.locale, {hour: '2-digit', minute: '2-digit'});
  }

  herald.StatusBanner = Backbone.View.extend({
    events: {'click .status-retry-now': 'retryNow'},

    initialize: function () {
      this.socket = 'connecting';
      this.redis = {redis: 'up'};
      this.retryAt = null;
      this.reason = null;  // the server's refusal of the last connect, if it refused
      this.refusal = null;
      this.shown = this.$el.attr('data-problem') || '';
      this.ticker = null;
      this.grace = null;
      if (this.shown === 'outage') {
        this.outageTries = 0;
        this.scheduleOutage();
        return;
      }
      var dispatcher = herald.dispatcher;
      this.listenTo(dispatcher, 'connection', this.onConnection);
      this.listenTo(dispatcher, 'retrying', function (retry) {
        this.retryAt = retry.at;
        this.reason = retry.reason || null;
        this.update();
      });
      this.listenTo(dispatcher, 'status', function (status) { this.redis = status; this.update(); });
      this.listenTo(dispatcher, 'error', function (error) { this.refusal = error; this.update(); });
    },

    onConnection: function (state) {
      var self = this;
      self.socket = state;
      if (state === 'connected') {
        self.retryAt = null;
        self.reason = null;
        self.refusal = null;
      }
      // Reconnecting: give it GRACE ms before saying anything.
      if (state === 'reconnecting' && !self.grace && self.shown !== 'server') {
        self.grace = setTimeout(function () { self.grace = null; self.update(); }, GRACE);
      }
      self.update();
    },

    // The problem to show now: '', 'server', 'device', 'refused', 'busy' or 'redis'.
    problem: function () {
      var offline = window.navigator && window.navigator.onLine === false;
      if (this.socket === 'connected') return this.redis.redis === 'down' ? 'redis' : '';
      if (this.socket === 'offline') return offline ? 'device' : this.refusal ? 'refused' : 'server';
      if (this.socket === 'reconnecting') {
        if (offline) return 'device';
        if (this.grace) return this.shown;  // within the grace: as it was
        // Refused as unavailable, the server said why (Redis away, or busy); lost
        // while Redis was away, that is still the likeliest reason.
        if (/redis/i.test(this.reason) || (!this.reason && this.redis.redis === 'down')) return 'redis';
        return /busy/.test(this.reason) ? 'busy' : 'server';
      }
      return '';  // connecting the first time
    },

    update: function () {
      var problem = this.problem();
      if (problem !== this.shown) {
        var was = this.shown;
        this.shown = problem;
        this.render();
        // All well again after a problem: what failed meanwhile may be redone now.
        if (was && !problem) herald.dispatcher.trigger('recovered');
      }
      this.renderWhen();
      return this;
    },

    // What is wrong and what still works: the live region, changed only with the problem.
    render: function () {
      var say = SAY[this.shown];
      var e = _.escape;
      var retry = this.$('.status-retry');
      var hadFocus = retry.find(':focus').length > 0;
      this.$el.attr('data-problem', this.shown);
      if (!say) {
        this.$('.status-text').empty();
        retry.prop('hidden', true);
        if (hadFocus) $('#main').trigger('focus');  // the button goes: focus stays on the page
        return this;
      }
      var title = say[0];
      if (this.shown === 'redis' && this.redis.since) {
        title = t('Herald cannot reach its database (Redis) since {time}.', {time: clock(this.redis.since)});
      }
      var detail = this.shown === 'refused' && this.refusal && this.refusal.message ?
        ' (' + this.refusal.message + ')' : '';
      this.$('.status-text').html('<strong class="status-title">' + e(title) + '</strong> ' +
                                  '<span class="status-works">' + e(say[1] + detail) + '</span>');
      retry.prop('hidden', false);
      this.renderButton();
      return this;
    },

    // Whether a change asked for now cannot be saved: Redis is known to be unreachable
    // (the server said so), so the page refuses it at once rather than wait seconds for
    // the server's own Redis timeouts to say the same.
    cannotSave: function () {
      return this.redis.redis === 'down' && (this.shown === 'redis' || this.socket === 'connected');
    },

    // "Retry now" is for the socket: not there while it is connected (Redis is the server's to retry).
    renderButton: function () {
      this.$('.status-retry-now').prop('hidden', this.shown === 'redis' && this.socket === 'connected');
    },

    // When the next try comes: a countdown from the client's retry schedule where known.
    renderWhen: function () {
      var self = this, text = '';
      clearTimeout(self.ticker);
      self.ticker = null;
      if (self.shown) self.renderButton();
      if (self.shown === 'redis' && self.socket === 'connected') {
        text = t('Herald checks again every few seconds; this goes away by itself.');
      } else if (self.shown === 'device') {
        text = t('Herald reconnects as soon as the network is back.');
      } else if (self.shown) {
        var at = self.shown === 'outage' ? self.outageAt : self.retryAt;
        var left = at ? Math.ceil((at - Date.now()) / 1000) : 0;
        if (self.shown === 'refused' && !at) text = '';
        else text = left > 0 ? t('Next try in {n} s.', {n: left}) : t('Trying again now…');
        if (left > 0) self.ticker = setTimeout(function () { self.renderWhen(); }, 1000);
      }
      self.$('.status-when').text(text);
      return self;
    },

    retryNow: function () {
      if (this.shown === 'outage') return this.tryOutage();
      var client = herald.client;
      if (client && client.reconnect()) {
        this.retryAt = null;
        this.renderWhen();
      }
    },

    // ---- The outage page: ask for the page again until it can be had -------------

    scheduleOutage: function () {
      var self = this;
      var step = OUTAGE_DELAYS[Math.min(self.outageTries, OUTAGE_DELAYS.length - 1)];
      var delay = Math.round(step * 1000 * (0.5 + Math.random() / 2));
      self.outageTries += 1;
      self.outageAt = Date.now() + delay;
      clearTimeout(self.outageTimer);
      self.outageTimer = setTimeout(function () { self.tryOutage(); }, delay);
      self.renderWhen();
    },

    tryOutage: function () {
      var self = this;
      clearTimeout(self.outageTimer);
      self.outageAt = null;
      self.renderWhen();
      fetch(window.location.href, {method: 'HEAD', cache: 'no-store', credentials: 'same-origin',
                                   redirect: 'manual'})
        .then(function (response) {
          // The page, or a redirect (to sign in): either way there is a page to show.
          if (response.ok || response.type === 'opaqueredirect') window.location.reload();
          else self.scheduleOutage();
        }, function () { self.scheduleOutage(); });
    }
  });

  // Every page with the banner gets one, before the page's own scripts connect.
  var element = document.getElementById('status-banner');
  if (element) herald.statusBanner = new herald.StatusBanner({el: element});

  // The error a change asked for now fails with at once, as the client's own refusal
  // of it would read (clients/js/herald.js, `failure`), or null when it may be sent.
  // Views ask before sending; the dispatcher's `recovered` says when to redo it.
  herald.unsaved = function () {
    if (!herald.statusBanner || !herald.statusBanner.cannotSave()) return null;
    var error = new Error('Herald is unreachable (its database, Redis, is not answering): your change was not saved.');
    error.status = 503;
    error.retryable = true;
    return error;
  };
})(window.herald = window.herald || {});
