/*
 * Toasts: a warning or worse that arrives live also pops up for a few
 * seconds (critical ones stay until closed); history loaded with the page
 * does not. At most `max` show at once; the oldest goes first.
 */
(function (herald) {
  'use strict';

  herald.ToastView = Backbone.View.extend({
    template: function (n) {
      return '<button class="close" type="button" aria-label="Dismiss">&times;</button>' +
        '<div class="title">' + _.escape(n.title) + '</div>' +
        '<div class="topic">' + _.escape(n.topic) + '</div>';
    },

    events: {
      'click .close': 'dismiss'
    },

    initialize: function (options) {
      this.max = options.max || 4;
      this.listenTo(this.collection, 'add', this.show);
    },

    show: function (model, collection, options) {
      if (!model.isAlarming() || (options && options.snapshot)) return;
      var toast = $('<div class="toast" role="alert">')
        .addClass('severity-' + model.get('severity'))
        .html(this.template(model.toJSON()));
      this.$el.append(toast);
      while (this.$el.children().length > this.max) this.$el.children().first().remove();
      if (model.get('severity') !== 'critical') {
        setTimeout(function () { toast.remove(); }, 6000);
      }
    },

    dismiss: function (event) {
      $(event.currentTarget).closest('.toast').remove();
    }
  });
})(window.herald = window.herald || {});
