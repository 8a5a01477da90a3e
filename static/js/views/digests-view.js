/*
 * The Digests page: a row per subscription (pause, edit, delete, preview)
 * and the form that makes or edits one. Server errors name the field and
 * are shown as they come.
 */
(function (herald) {
  'use strict';

  function errorOf(xhr) {
    return (xhr && xhr.responseJSON && xhr.responseJSON.error) || 'failed: HTTP ' + (xhr && xhr.status);
  }

  herald.DigestRowView = Backbone.View.extend({
    tagName: 'tr',
    template: function (d) {
      var e = _.escape;
      return '<td>' + e(d.email) + '</td><td><code>' + e(d.topics.join(', ')) + '</code></td>' +
        '<td>' + e(d.min_severity) + '</td><td>' + e(d.schedule) + ' <small>' + e(d.timezone) + '</small>' +
        (d.critical_now ? '<br><small>critical ones at once</small>' : '') + '</td>' +
        '<td class="state">' + (d.enabled ? 'enabled' : 'paused') + '</td>' +
        '<td class="actions"><button type="button" class="toggle">' + (d.enabled ? 'Pause' : 'Resume') +
        '</button><button type="button" class="edit">Edit</button>' +
        '<button type="button" class="preview">Preview</button>' +
        '<button type="button" class="delete">Delete</button></td>';
    },

    events: {
      'click .toggle': 'toggle',
      'click .edit': 'edit',
      'click .preview': 'preview',
      'click .delete': 'destroy'
    },

    initialize: function (options) {
      this.page = options.page;
      this.listenTo(this.model, 'change', this.render);
      this.listenTo(this.model, 'destroy remove', this.remove);
    },

    render: function () {
      this.$el.attr('data-id', this.model.id).html(this.template(this.model.toJSON()));
      return this;
    },

    toggle: function () {
      var page = this.page;
      this.model.save({enabled: !this.model.get('enabled')}, {patch: true, wait: true})
        .fail(function (xhr) { page.say(errorOf(xhr), true); });
    },

    edit: function () { this.page.edit(this.model); },

    preview: function () { this.page.preview(this.model); },

    destroy: function () {
      var page = this.page;
      this.model.destroy({wait: true}).fail(function (xhr) { page.say(errorOf(xhr), true); });
    }
  });

  herald.DigestsPageView = Backbone.View.extend({
    events: {
      'submit #digest-form': 'save',
      'click .cancel-edit': 'reset',
      'click .close-preview': 'closePreview'
    },

    initialize: function () {
      this.editing = null;
      this.listenTo(this.collection, 'add', this.addRow);
      this.listenTo(this.collection, 'update reset', this.showEmpty);
    },

    addRow: function (digest) {
      var row = new herald.DigestRowView({model: digest, page: this}).render();
      this.$('#digest-rows').append(row.el);
      this.showEmpty();
    },

    showEmpty: function () {
      this.$('#digests-empty').toggle(this.collection.isEmpty());
    },

    say: function (text, isError) {
      this.$('#digest-form .status').text(text).toggleClass('error', Boolean(isError));
    },

    formData: function () {
      var form = this.$('#digest-form');
      return {
        email: $.trim(form.find('[name=email]').val()),
        topics: _.compact(_.map(form.find('[name=topics]').val().split(','), $.trim)),
        min_severity: form.find('[name=min_severity]').val(),
        schedule: $.trim(form.find('[name=schedule]').val()),
        timezone: $.trim(form.find('[name=timezone]').val()),
        critical_now: form.find('[name=critical_now]').prop('checked'),
        enabled: form.find('[name=enabled]').prop('checked')
      };
    },

    save: function (event) {
      event.preventDefault();
      var view = this, data = this.formData();
      var digest = this.editing || new herald.Digest();
      var creating = !this.editing;
      digest.save(data, {patch: !creating, wait: true})
        .done(function () {
          if (creating) view.collection.add(digest);
          view.say(creating ? 'created' : 'saved');
          view.reset();
        })
        .fail(function (xhr) { view.say(errorOf(xhr), true); });
    },

    edit: function (digest) {
      var form = this.$('#digest-form');
      this.editing = digest;
      form.find('[name=email]').val(digest.get('email'));
      form.find('[name=topics]').val(digest.get('topics').join(', '));
      form.find('[name=min_severity]').val(digest.get('min_severity'));
      form.find('[name=schedule]').val(digest.get('schedule'));
      form.find('[name=timezone]').val(digest.get('timezone'));
      form.find('[name=critical_now]').prop('checked', digest.get('critical_now'));
      form.find('[name=enabled]').prop('checked', digest.get('enabled'));
      this.$('.form-title').text('Edit digest');
      this.$('.cancel-edit').prop('hidden', false);
    },

    reset: function () {
      this.editing = null;
      this.$('#digest-form')[0].reset();
      this.$('.form-title').text('New digest');
      this.$('.cancel-edit').prop('hidden', true);
    },

    preview: function (digest) {
      var panel = this.$('#preview');
      $.getJSON('/api/digests/' + digest.id + '/preview').done(function (reply) {
        panel.prop('hidden', false);
        if (!reply.total) {
          panel.find('.preview-subject').text('Nothing collected yet; next due ' +
            new Date(reply.window * 1000).toISOString().slice(0, 16).replace('T', ' ') + ' UTC.');
          panel.find('.preview-text').text('');
          panel.find('.preview-html').attr('srcdoc', '');
          return;
        }
        panel.find('.preview-subject').text(reply.subject);
        panel.find('.preview-text').text(reply.text);
        panel.find('.preview-html').attr('srcdoc', reply.html);
      });
    },

    closePreview: function () {
      this.$('#preview').prop('hidden', true);
    }
  });
})(window.herald = window.herald || {});
