/*
 * Toasts, calm in bursts: a warning or worse that arrives live also pops up
 * (history loaded with the page does not), one toast at a time.
 *
 * - A burst is one toast. What arrives within BURST_MS of the one before is
 *   gathered before anything shows (MAX_GATHER_MS at most), and what arrives
 *   while the toast shows joins it. News of one row of the feed (the same
 *   topic and title, or one run: `keyOf`) shows that row's title with "×N";
 *   news of several rows is one summary, "N new notifications", naming how
 *   many of each severity, the most severe first ("2 × critical, 9 × warning").
 * - Never for what is already handled: read, archived, snoozed or muted (gone
 *   from the view), or in use (`inUse`: the row the user is on in the list, or
 *   the one open in the detail). Such news drops out at once; a toast left
 *   with none goes.
 * - It closes by itself CLOSE_AFTER_MS after its last news, unless it holds a
 *   critical one: that stays until closed (its × button, or Escape in it).
 *   Clicking it opens the notification (of a row: the newest) or, for a
 *   summary, goes to the feed.
 *
 * A screen reader hears the news from announcer-view.js, not from here. The
 * toast never covers what the user is working in: when the focused field would
 * be under it, it moves to the other end of the screen.
 */
(function (herald) {
  'use strict';

  var e = _.escape;
  var BURST_MS = 400;          // news this close together is one burst
  var MAX_GATHER_MS = 1500;    // a long burst shows after this all the same
  var CLOSE_AFTER_MS = 8000;
  var MOST_SEVERE_FIRST = ['critical', 'error', 'warning'];

  function mostSevere(models) {
    var present = _.uniq(_.map(models, function (m) { return m.get('severity'); }));
    return _.find(MOST_SEVERE_FIRST, function (s) { return _.contains(present, s); }) || 'warning';
  }

  herald.ToastView = Backbone.View.extend({
    events: {
      'click .open-toast': 'open',
      'click .close': 'close',
      'keydown': 'escape'
    },

    // options.keyOf(model): the feed's row of a notification; options.inUse(model):
    // whether the user has its row in hand (the current row, the open detail).
    initialize: function (options) {
      this.keyOf = options.keyOf || function (model) { return model.id; };
      this.inUse = options.inUse || function () { return false; };
      this.ids = [];            // the news the toast stands for, oldest first
      this.shown = false;
      this.gathering = null;    // the timer of a burst being gathered
      this.gatheredFrom = null; // when the burst began (ms)
      this.closing = null;      // the timer of a toast that closes by itself
      this.listenTo(this.collection, 'arrived', this.arrive);
      this.listenTo(this.collection, 'change:read remove reset', this.refresh);
      this.place = _.bind(this.place, this);
      // The focus moved: onto a row with news, maybe (not within the toast itself).
      this.looked = _.bind(function (event) {
        if (!$.contains(this.el, event.target)) this.refresh();
        this.place();
      }, this);
      document.addEventListener('focusin', this.looked);
      window.addEventListener('resize', this.place);
    },

    arrive: function (model) {
      if (!model.isAlarming()) return;
      this.ids.push(model.id);
      if (this.shown) {  // joins the toast, which closes CLOSE_AFTER_MS after this news
        clearTimeout(this.closing);
        this.closing = null;
        this.refresh();
        return;
      }
      var now = Date.now();
      if (this.gatheredFrom === null) this.gatheredFrom = now;
      clearTimeout(this.gathering);
      this.gathering = setTimeout(_.bind(this.show, this),
        Math.max(0, Math.min(BURST_MS, this.gatheredFrom + MAX_GATHER_MS - now)));
    },

    // The news not handled yet (and forget the rest).
    news: function () {
      var collection = this.collection, inUse = this.inUse;
      var models = _.compact(_.map(this.ids, function (id) { return collection.get(id); }));
      models = _.filter(models, function (m) { return !m.get('read') && !inUse(m); });
      this.ids = _.pluck(models, 'id');
      return models;
    },

    show: function () {
      this.gathering = null;
      this.gatheredFrom = null;
      this.shown = true;
      this.render();
    },

    // Something may have been handled: drop it (before the toast shows, or from it).
    refresh: function () {
      if (this.shown) this.render(); else this.news();
    },

    render: function () {
      var models = this.news();
      if (!models.length) return this.close();
      var rows = _.groupBy(models, this.keyOf);
      var severity = mostSevere(models);
      var toast = this.$('.toast');
      if (!toast.length) toast = $('<div class="toast">').appendTo(this.$el);
      var html = _.size(rows) === 1 ? this.one(_.values(rows)[0], severity) : this.summary(models, severity);
      toast.attr('class', 'toast severity-' + severity).attr('data-id', _.size(rows) === 1 ? _.last(models).id : null);
      if (toast.data('html') !== html) toast.html(html).data('html', html);  // the same: keep the focus in it
      if (severity === 'critical') {  // stays until closed
        clearTimeout(this.closing);
        this.closing = null;
      } else if (!this.closing) {
        this.closing = setTimeout(_.bind(this.close, this), CLOSE_AFTER_MS);
      }
      this.place();
      return this;
    },

    severityHtml: function (severity) {
      return '<span class="severity"><span class="icon" aria-hidden="true">' + e(herald.SEVERITY_ICONS[severity]) +
        '</span> ' + e(herald.severityWord(severity)) + '</span>';
    },

    closeHtml: function () {
      return '<button class="close" type="button" aria-label="' + e(herald.t('Dismiss')) + '">&times;</button>';
    },

    // The news of one row: its newest title, how many times it came.
    one: function (group, severity) {
      var newest = _.last(group), count = group.length;
      return '<button class="open-toast" type="button">' +
          '<span class="toast-line">' + this.severityHtml(severity) +
            ' <span class="topic">' + e(newest.get('topic')) + '</span></span>' +
          '<span class="toast-line toast-main"><span class="title">' + e(newest.get('title')) + '</span>' +
            (count > 1 ? ' <span class="count"><span aria-hidden="true">×' + count + '</span><span class="sr-only">, ' +
              e(herald.tn('{n} time', '{n} times', count)) + '</span></span>' : '') + '</span>' +
        '</button>' + this.closeHtml();
    },

    // News of several rows: how many, and how many of each severity.
    summary: function (models, severity) {
      var bySeverity = _.countBy(models, function (m) { return m.get('severity'); });
      var counts = _.compact(_.map(MOST_SEVERE_FIRST, function (s) {
        return bySeverity[s] ? herald.t('{n} × {severity}', {n: bySeverity[s], severity: herald.severityWord(s)}) : null;
      }));
      return '<button class="open-toast summary" type="button">' +
          '<span class="toast-line">' + this.severityHtml(severity) +
            ' <span class="topic">' + e(counts.join(', ')) + '</span></span>' +
          '<span class="toast-line toast-main"><span class="title">' +
            e(herald.tn('{n} new notification', '{n} new notifications', models.length)) + '</span></span>' +
        '</button>' + this.closeHtml();
    },

    // Gone, and its news forgotten (the feed holds it); the focus, if it was on
    // the toast, goes to the feed.
    close: function () {
      var toast = this.$('.toast');
      var hadFocus = toast.length && $.contains(toast[0], document.activeElement);
      clearTimeout(this.closing);
      this.closing = null;
      this.shown = false;
      this.ids = [];
      toast.remove();
      if (hadFocus) $('#feed-heading').attr('tabindex', '-1').trigger('focus');
      return this;
    },

    // One row's news opens its newest notification; a summary leads to the feed.
    open: function () {
      var id = this.$('.toast').attr('data-id');
      if (id) {
        this.close();
        this.trigger('open', id);
      } else {
        this.close();
        $('#feed-heading').attr('tabindex', '-1').trigger('focus');
      }
    },

    escape: function (event) {
      if (event.key !== 'Escape') return;
      event.preventDefault();
      this.close();
    },

    // Move the toasts to the top when they would cover the focused field.
    place: function () {
      var active = document.activeElement;
      this.$el.removeClass('toasts-top');
      if (!active || active === document.body || $.contains(this.el, active) || !this.$el.children().length) return;
      var a = active.getBoundingClientRect(), t = this.el.getBoundingClientRect();
      var overlaps = a.left < t.right && t.left < a.right && a.top < t.bottom && t.top < a.bottom;
      this.$el.toggleClass('toasts-top', overlaps);
    },

    remove: function () {
      clearTimeout(this.gathering);
      clearTimeout(this.closing);
      document.removeEventListener('focusin', this.looked);
      window.removeEventListener('resize', this.place);
      return Backbone.View.prototype.remove.apply(this, arguments);
    }
  });
})(window.herald = window.herald || {});
