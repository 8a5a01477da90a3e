/*
 * Toasts: a warning or worse that arrives live also pops up (history loaded
 * with the page does not). Each shows its severity as a word and an icon,
 * opens the notification when clicked, and closes by itself after a while,
 * except critical ones, which stay until closed. At most three show; the rest
 * wait behind "N more", which leads to the feed.
 *
 * Toasts never cover what the user is working in: when the focused field
 * would be under them, they move to the other end of the screen.
 */
(function (herald) {
  'use strict';

  var e = _.escape;
  var SHOWN = 3;
  var CLOSE_AFTER_MS = 8000;

  herald.ToastView = Backbone.View.extend({
    template: function (n) {
      return '<button class="open-toast" type="button">' +
          '<span class="severity"><span class="icon" aria-hidden="true">' +
            e(herald.SEVERITY_ICONS[n.severity] || '') + '</span> ' + e(herald.severityWord(n.severity)) + '</span>' +
          '<span class="title">' + e(n.title) + '</span>' +
          '<span class="topic">' + e(n.topic) + '</span>' +
        '</button>' +
        '<button class="close" type="button" aria-label="' + e(herald.t('Dismiss')) + '">&times;</button>';
    },

    events: {
      'click .open-toast': 'open',
      'click .close': 'dismiss',
      'click .toast-more': 'more'
    },

    initialize: function () {
      this.queue = [];  // models waiting behind the shown ones
      this.listenTo(this.collection, 'arrived', this.arrive);
      this.place = _.bind(this.place, this);
      document.addEventListener('focusin', this.place);
      window.addEventListener('resize', this.place);
    },

    arrive: function (model) {
      if (!model.isAlarming()) return;
      if (this.$('.toast').length >= SHOWN) this.queue.push(model); else this.show(model);
      this.renderMore();
    },

    show: function (model) {
      var self = this;
      var toast = $('<div class="toast">')
        .addClass('severity-' + model.get('severity'))
        .attr('data-id', model.id)
        .html(self.template(model.toJSON()));
      self.$('.toast-more').before(toast);
      if (!self.$('.toast-more').length) self.$el.append(toast);
      if (model.get('severity') !== 'critical') {
        setTimeout(function () { self.close(toast); }, CLOSE_AFTER_MS);
      }
      self.place();
    },

    close: function (toast) {
      if (!toast.parent().length) return;
      var hadFocus = $.contains(toast[0], document.activeElement);
      toast.remove();
      if (this.queue.length) this.show(this.queue.shift());
      this.renderMore();
      if (hadFocus) $('#feed-heading').attr('tabindex', '-1').trigger('focus');
    },

    renderMore: function () {
      var more = this.$('.toast-more');
      if (!this.queue.length) { more.remove(); return; }
      if (!more.length) more = $('<button type="button" class="toast-more">').appendTo(this.$el);
      more.text(herald.t('{n} more', {n: this.queue.length}));
    },

    open: function (event) {
      var toast = $(event.currentTarget).closest('.toast');
      this.trigger('open', toast.attr('data-id'));
      this.close(toast);
    },

    dismiss: function (event) {
      this.close($(event.currentTarget).closest('.toast'));
    },

    // "N more": they are all in the feed; clear the queue and go there.
    more: function () {
      this.queue = [];
      this.renderMore();
      $('#feed-heading').attr('tabindex', '-1').trigger('focus');
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
      document.removeEventListener('focusin', this.place);
      window.removeEventListener('resize', this.place);
      return Backbone.View.prototype.remove.apply(this, arguments);
    }
  });
})(window.herald = window.herald || {});
