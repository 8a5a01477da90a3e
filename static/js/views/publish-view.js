/*
 * The admin's publish form: posts to /api/notifications with the session's
 * CSRF token and shows the id, or the server's error naming the field.
 */
(function (herald) {
  'use strict';

  herald.PublishView = Backbone.View.extend({
    events: {
      'submit form': 'publish'
    },

    initialize: function (options) {
      this.csrfToken = options.csrfToken;
    },

    publish: function (event) {
      event.preventDefault();
      var form = this.$('form');
      var status = this.$('.status');
      var envelope = {};
      _.each(form.serializeArray(), function (field) {
        if ($.trim(field.value)) envelope[field.name] = field.value;
      });
      status.text(herald.t('publishing…')).removeClass('error');
      $.ajax({
        url: '/api/notifications',
        method: 'POST',
        contentType: 'application/json',
        data: JSON.stringify(envelope),
        headers: {'X-CSRFToken': this.csrfToken}
      }).done(function (reply) {
        status.text(herald.t('published {id}', {id: reply.id}));
        form.find('input[name=title], textarea').val('');
      }).fail(function (xhr) {
        var reply = xhr.responseJSON || {};
        status.text(reply.error || herald.t('failed: HTTP {status}', {status: xhr.status})).addClass('error');
      });
    }
  });
})(window.herald = window.herald || {});
