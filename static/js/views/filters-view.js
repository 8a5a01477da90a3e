/*
 * The filters form: search words, which view (inbox, archived, snoozed),
 * severity, topic prefix, unread only. Submitting it (or changing a select or
 * the checkbox) asks for that view; the page puts it in the URL, so the view
 * can be shared or reloaded.
 */
(function (herald) {
  'use strict';

  herald.FiltersView = Backbone.View.extend({
    events: {
      'submit': 'submit',
      'change select, input[type=checkbox]': 'submit',
      'click .clear': 'clear'
    },

    // Show `filter` (as herald.parseFilter gives it) in the form.
    show: function (filter) {
      var form = this.el;
      this.tab = filter.tab;  // not in the form: the tab bar's
      form.elements.q.value = filter.q;
      form.elements.view.value = filter.view;
      form.elements.severity.value = filter.severity;
      form.elements.topic.value = filter.topic;
      form.elements.unread.checked = filter.unread === '1';
      return this;
    },

    read: function () {
      var form = this.el;
      return herald.parseFilter({
        tab: this.tab,
        q: form.elements.q.value, view: form.elements.view.value,
        severity: form.elements.severity.value, topic: form.elements.topic.value,
        unread: form.elements.unread.checked ? '1' : ''
      });
    },

    submit: function (event) {
      if (event) event.preventDefault();
      this.trigger('filter', this.read());
    },

    clear: function () {
      this.show(herald.parseFilter({tab: this.tab}));
      this.submit();
    }
  });
})(window.herald = window.herald || {});
