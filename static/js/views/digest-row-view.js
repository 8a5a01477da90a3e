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
    return (xhr && xhr.responseJSON && xhr.responseJSON.error) || 'failed: HTTP ' + (xhr && xhr.status);
  };

  herald.DigestRowView = Backbone.View.extend(_.extend({
    confirmName: 'email',  // what the delete question and notice name (confirm-delete.js)

    tagName: 'tr',

    template: function (d) {
      var e = _.escape;
      return '<td data-label="Email">' + e(d.email) + '</td>' +
        '<td data-label="Topics"><code>' + e(d.topics.join(', ')) + '</code></td>' +
        '<td data-label="At least">' + e(d.min_severity) + '</td>' +
        '<td data-label="Schedule" class="schedule"><code>' + e(d.schedule) + '</code>' +
        (d.schedule_words ? ' <span class="schedule-words">' + e(d.schedule_words) + '</span>' : '') +
        ' <small>(' + e(d.timezone) + ')</small>' +
        (d.critical_now ? '<br><small>critical ones at once</small>' : '') + '</td>' +
        '<td class="state" data-label="State">' + (d.enabled ? 'enabled' : 'paused') + '</td>' +
        '<td class="actions">' + this.actions(d) + '</td>';
    },

    actions: function (d) {
      var e = _.escape, which = ' digest for ' + e(d.email);
      if (this.confirming) {
        return '<span class="confirm" role="group" aria-label="Confirm delete">' +
          '<span class="question">Delete the' + which + '?</span> ' +
          '<button type="button" class="confirm-delete danger">Yes, delete</button>' +
          '<button type="button" class="cancel-delete">No, keep it</button></span>';
      }
      return '<button type="button" class="toggle" aria-label="' + (d.enabled ? 'Pause' : 'Resume') +
        which + '">' + (d.enabled ? 'Pause' : 'Resume') + '</button>' +
        '<button type="button" class="edit" aria-label="Edit' + which + '">Edit</button>' +
        '<button type="button" class="preview" aria-label="Preview' + which + '">Preview</button>' +
        '<button type="button" class="delete" aria-label="Delete' + which + '">Delete</button>';
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
