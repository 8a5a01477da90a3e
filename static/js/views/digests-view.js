/*
 * The Digests page: the table of subscriptions (views/digest-row-view.js),
 * the form that makes or edits one, with its schedule described in words as
 * it is typed (`GET /api/digests/describe`), and the email preview.
 *
 * Server errors name the field and are shown as they come. A digest deleted
 * meanwhile (in another tab) answers 404 to whatever is tried on it: the
 * page says so, takes it out of the list and leaves the form, no error.
 */
(function (herald) {
  'use strict';

  var BROWSER_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

  herald.DigestsPageView = Backbone.View.extend({
    events: {
      'submit #digest-form': 'save',
      'click .cancel-edit': 'reset',
      'input #digest-form [name=schedule]': 'typed'
    },

    initialize: function () {
      this.editing = null;
      this.asked = 0;  // the latest describe request; older answers are dropped
      this.describeSoon = _.debounce(_.bind(this.describe, this), 250);
      this.previewView = new herald.DigestPreviewView({el: this.$('#preview'), page: this});
      this.listenTo(this.collection, 'add', this.addRow);
      this.listenTo(this.collection, 'update reset', this.showEmpty);
      this.reset();
    },

    addRow: function (digest) {
      var row = new herald.DigestRowView({model: digest, page: this}).render();
      this.$('#digest-rows').append(row.el);
      this.showEmpty();
    },

    showEmpty: function () {
      var empty = this.collection.isEmpty();
      this.$('#digests-empty').toggle(empty);
      this.$('.digests-table').toggle(!empty);
    },

    // A message under the form / above the table.
    say: function (text, isError) {
      this.$('#digest-form .status').text(text).toggleClass('error', Boolean(isError));
    },

    notice: function (text, isError) {
      this.$('#digests-notice').text(text).toggleClass('error', Boolean(isError));
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
          view.reset();
          view.say(creating ? herald.t('created') : herald.t('saved'));
        })
        .fail(function (xhr) {
          if (!creating && xhr.status === 404) view.gone(digest);
          else view.say(herald.digestError(xhr), true);
        });
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
      this.$('.form-title').text(herald.t('Edit the digest for {email}', {email: digest.get('email')}));
      this.$('.cancel-edit').prop('hidden', false);
      this.say('');
      this.describe();
      form.find('[name=email]').trigger('focus');
    },

    // Back to a new digest: the defaults, in the reader's own time zone.
    reset: function () {
      this.editing = null;
      this.$('#digest-form')[0].reset();
      this.$('#digest-form [name=timezone]').val(BROWSER_ZONE);
      this.$('.form-title').text(herald.t('New digest'));
      this.$('.cancel-edit').prop('hidden', true);
      this.say('');
      this.describe();
    },

    typed: function () { this.describeSoon(); },

    // The schedule being typed, in words (or why it cannot be used).
    describe: function () {
      var view = this, asked = ++this.asked;
      var words = this.$('#schedule-words');
      var schedule = $.trim(this.$('#digest-form [name=schedule]').val());
      if (!schedule) {
        words.text('').removeClass('error');
        return;
      }
      $.getJSON('/api/digests/describe', {schedule: schedule})
        .done(function (reply) {
          if (asked === view.asked) words.text(reply.words).removeClass('error');
        })
        .fail(function (xhr) {
          if (asked === view.asked) words.text(herald.digestError(xhr)).addClass('error');
        });
    },

    preview: function (digest, opener) {
      this.previewView.show(digest, opener);
    },

    // `digest` was deleted elsewhere: say so, and take it off the page.
    gone: function (digest) {
      var text = herald.t('This digest ({email}) was deleted, perhaps in another tab; it is no longer in the list.',
                          {email: digest.get('email')});
      if (this.editing === digest) {
        this.reset();
        this.say(text, true);
      }
      this.previewView.forget(digest);
      this.collection.remove(digest);
      this.notice(text, true);
    },

    deleted: function (email) {
      this.notice(herald.t('Deleted the digest for {email}.', {email: email}));
      if (this.editing && !this.collection.get(this.editing.id)) this.reset();
      this.$('#digests-heading').trigger('focus');
    }
  });
})(window.herald = window.herald || {});
