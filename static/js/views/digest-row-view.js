/*
 * One digest subscription in the Digests page's table: its schedule as
 * written and in words, and its actions (pause or resume, edit, preview,
 * delete). Delete asks first, in the row itself: "Delete …? Yes, delete /
 * No, keep it", with the focus on "No" and Escape for no as well.
 * A 404 from any action means the digest was deleted elsewhere: the page's
 * `gone` says so and takes the row away.
 */
(function (herald) {
  'use strict';

  herald.digestError = function (xhr) {
    return (xhr && xhr.responseJSON && xhr.responseJSON.error) || herald.t('failed: HTTP {status}', {status: xhr && xhr.status});
  };

  herald.DigestRowView = Backbone.View.extend(_.extend({
    confirmName: 'email',  // what the delete question and notice name (confirm-delete.js)

    tagName: 'tr',

    template: function (d) {
      var e = _.escape;
      var t = herald.t;
      return '<td data-label="' + e(t('Email')) + '">' + e(d.email) + '</td>' +
        '<td data-label="' + e(t('Topics')) + '"><code>' + e(d.topics.join(', ')) + '</code></td>' +
        '<td data-label="' + e(t('At least')) + '">' + e(t(d.min_severity)) + '</td>' +
        '<td data-label="' + e(t('Schedule')) + '" class="schedule"><code>' + e(d.schedule) + '</code>' +
        (d.schedule_words ? ' <span class="schedule-words">' + e(d.schedule_words) + '</span>' : '') +
        ' <small>(' + e(d.timezone) + ')</small>' +
        (d.critical_now ? '<br><small>' + e(t('critical ones at once')) + '</small>' : '') + '</td>' +
        '<td class="state" data-label="' + e(t('State')) + '">' + e(d.enabled ? t('enabled') : t('paused')) + '</td>' +
        '<td class="actions">' + this.actions(d) + '</td>';
    },

    actions: function (d) {
      var e = _.escape, t = herald.t, email = {email: d.email};
      if (this.confirming) {
        return '<span class="confirm" role="group" aria-label="' + e(t('Confirm delete')) + '">' +
          '<span class="question">' + e(t('Delete the digest for {email}?', email)) + '</span> ' +
          '<button type="button" class="confirm-delete danger">' + e(t('Yes, delete')) + '</button>' +
          '<button type="button" class="cancel-delete">' + e(t('No, keep it')) + '</button></span>';
      }
      return '<button type="button" class="toggle" aria-label="' +
        e(d.enabled ? t('Pause the digest for {email}', email) : t('Resume the digest for {email}', email)) + '">' +
        e(d.enabled ? t('Pause') : t('Resume')) + '</button>' +
        '<button type="button" class="edit" aria-label="' + e(t('Edit the digest for {email}', email)) + '">' + e(t('Edit')) + '</button>' +
        '<button type="button" class="preview" aria-label="' + e(t('Preview the digest for {email}', email)) + '">' +
        e(t('Preview')) + '</button>' +
        '<button type="button" class="delete" aria-label="' + e(t('Delete the digest for {email}', email)) + '">' +
        e(t('Delete')) + '</button>';
    },

    events: {
      'click .toggle': 'toggle',
      'click .edit': 'edit',
      'click .preview': 'preview',
      'click .delete': 'ask',
      'click .confirm-delete': 'destroy',
      'click .cancel-delete': 'keep',
      'keydown .confirm': 'escape'
    },

    initialize: function (options) {
      this.page = options.page;
      this.confirming = false;
      this.listenTo(this.model, 'change', this.render);
      this.listenTo(this.model, 'destroy remove', this.remove);
    },

    render: function () {
      this.$el.attr('data-id', this.model.id).html(this.template(this.model.toJSON()));
      return this;
    },

    // A failed request: 404 is "deleted meanwhile", anything else is said as it came.
    failed: function (xhr) {
      if (xhr.status === 404) this.page.gone(this.model);
      else this.page.notice(herald.digestError(xhr), true);
    },

    toggle: function () {
      this.model.save({enabled: !this.model.get('enabled')}, {patch: true, wait: true})
        .fail(_.bind(this.failed, this));
    },

    edit: function () { this.page.edit(this.model); },

    preview: function (event) { this.page.preview(this.model, event.currentTarget); }
  }, herald.ConfirmDelete));
})(window.herald = window.herald || {});
