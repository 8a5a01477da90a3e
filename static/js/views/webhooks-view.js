/*
 * The Webhooks page: the table of endpoints (views/webhook-row-view.js), kept
 * fresh every few seconds, and the form that registers one. The signing
 * secret Herald makes is shown once, right after registration, in a
 * read-only field to copy, until the reader hides it.
 *
 * Server errors name the field ("url: … resolves to 10.0.0.5, a private
 * address …") and are shown as they come.
 */
(function (herald) {
  'use strict';

  var REFRESH_MS = 5000;

  herald.WebhooksPageView = Backbone.View.extend({
    events: {
      'submit #webhook-form': 'save',
      'click .dismiss-secret': 'hideSecret',
      'focus #new-secret-value': 'selectSecret'
    },

    initialize: function () {
      this.listenTo(this.collection, 'add', this.addRow);
      this.listenTo(this.collection, 'update reset', this.showEmpty);
      this.showEmpty();
      this.timer = setInterval(_.bind(this.refresh, this), REFRESH_MS);
    },

    remove: function () {
      clearInterval(this.timer);
      return Backbone.View.prototype.remove.call(this);
    },

    refresh: function () {
      this.collection.fetch({remove: true, merge: true});
    },

    addRow: function (webhook) {
      var row = new herald.WebhookRowView({model: webhook, page: this}).render();
      this.$('#webhook-rows').append(row.el);
      this.showEmpty();
    },

    showEmpty: function () {
      var empty = this.collection.isEmpty();
      this.$('#webhooks-empty').toggle(empty);
      this.$('.webhooks-table').toggle(!empty);
    },

    say: function (text, isError) {
      this.$('#webhook-form .status').text(text).toggleClass('error', Boolean(isError));
    },

    notice: function (text, isError) {
      this.$('#webhooks-notice').text(text).toggleClass('error', Boolean(isError));
    },

    formData: function () {
      var form = this.$('#webhook-form');
      return {
        url: $.trim(form.find('[name=url]').val()),
        topics: _.compact(_.map(form.find('[name=topics]').val().split(','), $.trim)),
        min_severity: form.find('[name=min_severity]').val(),
        'private': form.find('[name=private]').prop('checked')
      };
    },

    save: function (event) {
      event.preventDefault();
      var view = this, webhook = new herald.Webhook();
      this.say(herald.t('registering…'));
      webhook.save(this.formData(), {wait: true})
        .done(function () {
          var secret = webhook.get('secret');
          webhook.unset('secret', {silent: true});
          view.collection.add(webhook);
          view.$('#webhook-form')[0].reset();
          view.say(herald.t('registered'));
          view.showSecret(webhook.get('url'), secret);
        })
        .fail(function (xhr) { view.say(herald.webhookError(xhr), true); });
    },

    showSecret: function (url, secret) {
      var box = this.$('#new-secret');
      box.find('.secret-url').text(url);
      box.find('#new-secret-value').val(secret);
      box.prop('hidden', false).trigger('focus');
    },

    selectSecret: function (event) { event.currentTarget.select(); },

    hideSecret: function () {
      this.$('#new-secret-value').val('');
      this.$('#new-secret').prop('hidden', true);
      this.$('#webhook-form [name=url]').trigger('focus');
    },

    gone: function (webhook) {
      this.collection.remove(webhook);
      this.notice(herald.t('The webhook to {url} was deleted, perhaps in another tab; it is no longer in the list.',
                           {url: webhook.get('url')}), true);
    },

    deleted: function (url) {
      this.notice(herald.t('Deleted the webhook to {url}.', {url: url}));
      this.$('#webhooks-heading').trigger('focus');
    }
  });
})(window.herald = window.herald || {});
