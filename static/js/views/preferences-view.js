/*
 * The preferences form: an email address, a time zone, quiet hours for
 * email, and per topic prefix how to be told (in the app only, an hourly,
 * daily or weekly digest, or an email at once for critical ones). Saved
 * whole (PUT /api/preferences); the server's error names the field.
 */
(function (herald) {
  'use strict';

  var e = _.escape;
  var t = herald.t;  // the page's language (i18n.js)
  var MODES = [['app', t('In the app only')], ['hourly', t('Email digest, hourly')],
               ['daily', t('Email digest, daily (08:00)')], ['weekly', t('Email digest, weekly (Monday 08:00)')],
               ['critical', t('Email at once, critical only')], ['mute', t('Muted: not in the inbox')]];

  herald.PreferencesView = Backbone.View.extend({
    rule: function (rule, index) {
      var id = 'rule-' + index + '-';
      return '<li>' +
        '<label for="' + id + 'topic">' + e(t('Topic prefix')) + ' <input id="' + id + 'topic" class="rule-topic" required ' +
          'value="' + e(rule.topic) + '" placeholder="ops, spark, *"></label>' +
        '<label for="' + id + 'mode">' + e(t('How')) + ' <select id="' + id + 'mode" class="rule-mode">' +
          _.map(MODES, function (mode) {
            return '<option value="' + mode[0] + '"' + (mode[0] === rule.mode ? ' selected' : '') + '>' +
              e(mode[1]) + '</option>';
          }).join('') + '</select></label>' +
        '<button type="button" class="remove-rule" aria-label="' +
          e(rule.topic ? t('Remove the rule for {topic}', {topic: rule.topic}) : t('Remove the rule for this topic')) +
          '">' + e(t('Remove')) + '</button>' +
        '</li>';
    },

    events: {
      'submit': 'save',
      'click .add-rule': 'addRule',
      'click .remove-rule': 'removeRule'
    },

    initialize: function () {
      this.zones();
    },

    zones: function () {
      var list = (Intl.supportedValuesOf && Intl.supportedValuesOf('timeZone')) || [];
      this.$('#zones').html(_.map(list, function (zone) { return '<option value="' + e(zone) + '">'; }).join(''));
    },

    show: function (prefs) {
      var form = this.el;
      form.elements.email.value = prefs.email || '';
      form.elements.timezone.value = prefs.timezone && prefs.timezone !== 'UTC' ? prefs.timezone :
        Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
      form.elements.quiet_from.value = prefs.quiet ? prefs.quiet.from : '';
      form.elements.quiet_to.value = prefs.quiet ? prefs.quiet.to : '';
      this.$('#rules').html(_.map(prefs.rules, this.rule, this).join(''));
      return this;
    },

    read: function () {
      var form = this.el, from = form.elements.quiet_from.value, to = form.elements.quiet_to.value;
      return {
        email: form.elements.email.value.trim() || null,
        timezone: form.elements.timezone.value.trim(),
        quiet: from || to ? {from: from, to: to} : null,
        rules: this.$('#rules li').map(function () {
          return {topic: $(this).find('.rule-topic').val().trim(), mode: $(this).find('.rule-mode').val()};
        }).get()
      };
    },

    addRule: function () {
      var rules = this.$('#rules');
      rules.append(this.rule({topic: '', mode: 'daily'}, rules.children().length + Date.now()));
      rules.children().last().find('.rule-topic').trigger('focus');
    },

    removeRule: function (event) {
      var item = $(event.currentTarget).closest('li');
      var next = item.next().length ? item.next() : item.prev();
      item.remove();
      (next.length ? next.find('.rule-topic') : this.$('.add-rule')).trigger('focus');
    },

    save: function (event) {
      event.preventDefault();
      var status = this.$('.status').removeClass('error').text(t('Saving…'));
      var self = this;
      herald.client.send('/api/preferences', self.read(), 'PUT').then(function (prefs) {
        self.show(prefs);
        status.text(t('Saved.'));
      }, function (error) {
        // Herald out of reach says "not saved" itself (herald.js); a refusal names the field.
        status.addClass('error').text(error.retryable ? herald.errorText(error) : t('Not saved: {why}', {why: error.message}));
      });
    }
  });
})(window.herald = window.herald || {});
