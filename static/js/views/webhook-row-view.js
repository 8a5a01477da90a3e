/*
 * One webhook endpoint in the Webhooks page's table: where it points, what it
 * takes, how its deliveries go (waiting, parked, last error, last success in
 * the reader's own time), and its actions: deliver the parked ones again,
 * delete. Delete asks first, in the row itself ("Yes, delete / No, keep it",
 * the focus on "No", Escape for no as well).
 *
 * The page refreshes the state every few seconds: only the state cell is
 * redrawn then, so that the focus stays where the reader left it.
 */
(function (herald) {
  'use strict';

  herald.webhookError = function (xhr) {
    return (xhr && xhr.responseJSON && xhr.responseJSON.error) || herald.t('failed: HTTP {status}', {status: xhr && xhr.status});
  };

  // A URL as HTML that may wrap after its punctuation, and inside long runs
  // (<wbr>), so that it fits a phone's width: URLs have no spaces to wrap at.
  function breakable(url) {
    return _.map(String(url).match(/[^\/.?&=_-]{1,12}[\/.?&=_-]*|[\/.?&=_-]+/g) || [], _.escape)
      .join('<wbr>');
  }

  herald.WebhookRowView = Backbone.View.extend(_.extend({
    confirmName: 'url',  // what the delete question and notice name (confirm-delete.js)

    tagName: 'tr',

    template: function (w) {
      var e = _.escape;
      var t = herald.t;
      return '<td data-label="URL"><code>' + breakable(w.url) + '</code>' +
        (w['private'] ? '<br><small>' + e(t('private notifications too')) + '</small>' : '') + '</td>' +
        '<td data-label="' + e(t('Topics')) + '"><code>' + e(w.topics.join(', ')) + '</code></td>' +
        '<td data-label="' + e(t('At least')) + '">' + e(t(w.min_severity)) + '</td>' +
        '<td class="state" data-label="' + e(t('Deliveries')) + '">' + this.state(w) + '</td>' +
        '<td class="actions">' + this.actions(w) + '</td>';
    },

    state: function (w) {
      var e = _.escape, lines = [];
      lines.push(e(herald.t('{n} waiting', {n: w.pending}) + (w.retrying ? ' ' + herald.tn('(the first failed {n} time)',
        '(the first failed {n} times)', w.retrying) : '') + ', ' +
        herald.t('{parked} parked, {delivered} delivered', {parked: w.parked, delivered: w.delivered})));
      if (w.last_success_at) lines.push(herald.tHtml('last success {time}', {time: herald.timeHtml(w.last_success_at * 1000)}));
      if (w.last_error) {
        lines.push('<span class="error">' + e(herald.t('last error: {error}', {error: w.last_error})) + '</span>' +
          (w.last_error_at ? ' (' + herald.timeHtml(w.last_error_at * 1000) + ')' : ''));
      }
      return lines.join('<br>');
    },

    actions: function (w) {
      var e = _.escape, t = herald.t, url = {url: w.url};
      if (this.confirming) {
        return '<span class="confirm" role="group" aria-label="' + e(t('Confirm delete')) + '">' +
          '<span class="question">' + herald.tHtml('Delete the webhook to {url}?', {url: breakable(w.url)}) + '</span> ' +
          '<button type="button" class="confirm-delete danger">' + e(t('Yes, delete')) + '</button>' +
          '<button type="button" class="cancel-delete">' + e(t('No, keep it')) + '</button></span>';
      }
      return (w.parked ? '<button type="button" class="retry" aria-label="' +
        e(t('Deliver the parked ones of the webhook to {url} again', url)) + '">' + e(t('Retry parked')) + '</button>' : '') +
        '<button type="button" class="delete" aria-label="' + e(t('Delete the webhook to {url}', url)) + '">' +
        e(t('Delete')) + '</button>';
    },

    events: {
      'click .retry': 'retry',
      'click .delete': 'ask',
      'click .confirm-delete': 'destroy',
      'click .cancel-delete': 'keep',
      'keydown .confirm': 'escape'
    },

    initialize: function (options) {
      this.page = options.page;
      this.confirming = false;
      this.listenTo(this.model, 'change', this.refresh);
      this.listenTo(this.model, 'destroy remove', this.remove);
    },

    render: function () {
      this.$el.attr('data-id', this.model.id).html(this.template(this.model.toJSON()));
      return this;
    },

    // New figures: the state cell, and the actions only when "Retry parked" comes or goes
    // (and the focus is not in them).
    refresh: function () {
      var w = this.model.toJSON();
      this.$('.state').html(this.state(w));
      var hasRetry = this.$('.retry').length > 0;
      if (!this.confirming && hasRetry !== Boolean(w.parked) &&
          !$.contains(this.$('.actions')[0], document.activeElement)) {
        this.$('.actions').html(this.actions(w));
      }
    },

    failed: function (xhr) {
      if (xhr.status === 404) this.page.gone(this.model);
      else this.page.notice(herald.webhookError(xhr), true);
    },

    retry: function () {
      var view = this;
      this.model.retryParked()
        .done(function (reply) {
          view.page.notice(herald.tn('Delivering {n} parked notification to {url} again.',
            'Delivering {n} parked notifications to {url} again.', reply.requeued, {url: view.model.get('url')}));
          view.model.fetch();
        })
        .fail(_.bind(this.failed, this));
    }
  }, herald.ConfirmDelete));
})(window.herald = window.herald || {});
