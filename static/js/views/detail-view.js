/*
 * One notification opened: title, severity, topic, exact and relative time
 * in the user's zone, body, its `data` shown readably, and its link.
 *
 * It has its own URL (`?n=<id>` beside the filters), so it can be shared or
 * reloaded: the page opens it from the collection, or from the server when
 * it is not loaded (GET /api/notifications/<id>). Beside the feed on a wide
 * screen, instead of it on a phone. Escape or "Close" returns to the feed,
 * with the focus back on the item it came from.
 *
 * Its actions go through the feed's (`actions`, feed-actions.js: with an Undo,
 * a failure noted on the row). Once open it follows the feed's current row
 * (detail-follow.js): archived or snoozed, the next row is shown here, so it
 * never keeps an item gone from the list with live buttons. The keys act on
 * what it shows while it has the focus (feed-keys.js).
 */
(function (herald) {
  'use strict';

  var e = _.escape;

  // Only absolute http(s) URLs and paths are links (the server checks the same).
  function safeUrl(url) {
    return typeof url === 'string' && (/^https?:\/\//i.test(url) || /^\/(?!\/)/.test(url)) ? url : null;
  }

  // `data` readably: an object's fields as a list (nested values as indented JSON).
  function dataHtml(data) {
    if (data === undefined || data === null) return '';
    var html = '<h3>' + e(herald.t('Data')) + '</h3>';
    if (_.isObject(data) && !_.isArray(data)) {
      html += '<dl class="data">' + _.map(data, function (value, key) {
        var text = _.isObject(value) ? '<pre>' + e(JSON.stringify(value, null, 2)) + '</pre>' : e(String(value));
        return '<dt>' + e(key) + '</dt><dd>' + text + '</dd>';
      }).join('') + '</dl>';
    } else {
      html += '<pre>' + e(JSON.stringify(data, null, 2)) + '</pre>';
    }
    return html;
  }

  // Every notification of a group (a run's steps, or the repeats), not only the newest.
  function groupHtml(group, shown) {
    if (group.length < 2) return '';
    return '<h3>' + e(herald.t('All {n} in this group', {n: group.length})) + '</h3><ol class="group-list">' +
      _.map(group, function (model) {
        var n = model.toJSON(), percent = herald.percentOf(n.data);
        return '<li' + (n.id === shown ? ' aria-current="true"' : '') + '><span class="title">' + e(n.title) +
          '</span> <span class="meta">' + e(herald.severityWord(n.severity)) + (percent !== null ? ', ' + Math.round(percent) + '%' : '') +
          ', <time datetime="' + e(n.ts) + '">' + e(herald.exactTime(new Date(n.ts))) + '</time></span>' +
          (n.body ? '<div class="body">' + e(n.body) + '</div>' : '') + '</li>';
      }).join('') + '</ol>';
  }

  herald.DetailView = Backbone.View.extend({
    template: function (n, read, view) {
      var url = safeUrl(n.url);
      var actions = '<button type="button" class="toggle-read">' + e(read ? herald.t('Mark unread') : herald.t('Mark read')) + '</button>';
      if (view === 'archived') actions += '<button type="button" class="unarchive">' + e(herald.t('Move to inbox')) + '</button>';
      else actions += '<button type="button" class="archive">' + e(herald.t('Archive')) + '</button>' + herald.snoozeMenu();
      return '<div class="card-head"><h2 id="detail-title" tabindex="-1">' + e(n.title) + '</h2>' +
          '<button type="button" class="close-detail">' + e(herald.t('Close')) + '</button></div>' +
        '<dl>' +
          '<dt>' + e(herald.t('Severity')) + '</dt><dd class="severity"><span class="icon" aria-hidden="true">' +
            e(herald.SEVERITY_ICONS[n.severity] || '') + '</span> ' + e(herald.severityWord(n.severity)) + '</dd>' +
          '<dt>' + e(herald.t('Topic')) + '</dt><dd class="topic">' + e(n.topic) + '</dd>' +
          '<dt>' + e(herald.t('Time')) + '</dt><dd><time datetime="' + e(n.ts) + '">' + e(herald.exactTime(new Date(n.ts))) +
            '</time> (<span class="relative">' + e(herald.relativeTime(new Date(n.ts).getTime())) + '</span>)</dd>' +
          (n.user ? '<dt>' + e(herald.t('For')) + '</dt><dd>' + e(herald.t('you only')) + '</dd>' : '') +
        '</dl>' +
        (n.body ? '<p class="body">' + e(n.body) + '</p>' : '') +
        (url ? '<p><a class="link" href="' + e(url) + '" rel="noopener noreferrer">' + e(herald.t('Open {url}', {url: url})) + '</a></p>' : '') +
        dataHtml(n.data) +
        groupHtml(this.group(), n.id) +
        '<div class="actions">' + actions + '</div>';
    },

    // The group the feed shows this notification in (a run, or repeats), newest first.
    group: function () {
      return (this.envelope && this.groupOf && this.groupOf(this.envelope.id)) || [];
    },

    events: {
      'click .close-detail': 'close',
      'click .toggle-read': 'toggleRead',
      'click .archive': 'archive',
      'click .unarchive': 'unarchive',
      'click .snooze-for': 'snoozeFor',
      'click .snooze-custom': 'snoozeCustom',
      'keydown': 'keydown'
    },

    initialize: function (options) {
      this.columns = options.columns;
      this.actions = options.actions;
      this.shown = null;  // the id asked for last (set at once; `envelope` once it is in)
      this.groupOf = options.groupOf;
      herald.fillSnoozeMenusOpening(this.el);
      this.envelope = null;
      this.listenTo(this.collection, 'change:read', function (model) {
        if (this.envelope && model.id === this.envelope.id) this.render();
      });
    },

    // Show notification `id` (from the collection, else the server); a promise.
    // `options.focus` false: the focus stays where it is (following the list's row).
    show: function (id, options) {
      var self = this, model = self.collection.get(id), focus = !options || options.focus !== false;
      self.returnTo = self.shown = id;
      self.fromCollection = Boolean(model);
      var found = model ? Promise.resolve(model.toJSON()) :
        herald.client.get('/api/notifications/' + encodeURIComponent(id));
      return found.then(function (envelope) {
        if (self.shown !== id) return;  // another was asked for meanwhile
        self.envelope = envelope;
        if (!self.collection.isRead(envelope.id)) {
          self.collection.setReadFor(self.models(), true).catch(function () { /* told as action:error */ });
        }
        self.render();
        if (focus) self.$('#detail-title').trigger('focus');
        self.trigger('shown', id);
      }, function (error) {
        self.envelope = null;
        self.$el.html('<div class="card-head"><h2 id="detail-title" tabindex="-1">' + e(herald.t('Not found')) + '</h2>' +
          '<button type="button" class="close-detail">' + e(herald.t('Close')) + '</button></div>' +
          '<p>' + e(herald.errorText(error)) + '</p>').prop('hidden', false);
        self.columns.addClass('with-detail');
        self.$('#detail-title').trigger('focus');
      });
    },

    // Drawn again when its read state changes (here or in another tab): the
    // control that had the focus has it again, so Escape and Tab still work.
    render: function () {
      if (!this.envelope) return this;
      var active = document.activeElement, focused = null;
      if (active && active !== this.el && $.contains(this.el, active)) {
        focused = active.id ? '#' + active.id : (active.className ? '.' + active.className.split(/\s+/)[0] : null);
      }
      var read = this.collection.isRead(this.envelope.id);
      this.$el.html(this.template(this.envelope, read, this.collection.criteria.view)).prop('hidden', false);
      this.columns.addClass('with-detail');
      if (focused) {  // the same control, else (a menu's choice, gone) the title
        var again = this.$(focused).first();
        (again.length ? again : this.$('#detail-title')).trigger('focus');
      }
      return this;
    },

    hide: function () {
      this.envelope = this.shown = null;
      this.$el.prop('hidden', true).empty();
      this.columns.removeClass('with-detail');
      this.trigger('hidden');
    },

    // Whether it shows something (or is about to).
    isOpen: function () {
      return Boolean(this.shown);
    },

    close: function () {
      this.trigger('close', this.returnTo);
    },

    // Escape closes it, unless a snooze menu is open in it (the menu closes: feed-keys.js).
    keydown: function (event) {
      if (event.key === 'Escape' && !$(event.target).closest('details.snooze[open]').length) this.close();
    },

    // What the actions here apply to: the whole group shown (as in the feed).
    models: function () {
      var group = this.group();
      if (group.length) return group;
      var model = this.envelope && this.collection.get(this.envelope.id);
      return model ? [model] : [new herald.Notification(this.envelope)];
    },

    // ---- Its actions (buttons, or keys while it has the focus) ----------------------
    // Done through the feed's actions; the item then leaves the list and the detail
    // shows the next (detail-follow.js). One not from the list (opened by its URL,
    // older than what is loaded) is closed instead: nothing would take its place.

    after: function () {
      if (!this.fromCollection) this.close();
    },

    // The `s` key: open this menu, its first choice focused.
    openSnooze: function () {
      herald.openSnoozeMenu(this.$('details.snooze')[0]);
    },

    snoozeUntil: function (until) {
      this.$('details.snooze').prop('open', false);
      this.$('#detail-title').trigger('focus');
      this.actions.snoozeModels(this.models(), until);
      this.after();
    },

    snoozeFor: function (event) {
      this.snoozeUntil(Number($(event.currentTarget).attr('data-until')));
    },

    snoozeCustom: function (event) {
      var until = herald.snoozeMenuUntil(event.currentTarget);
      if (until) this.snoozeUntil(until);
    },

    toggleRead: function () {
      if (!this.envelope) return;
      this.actions.setRead(!this.collection.isRead(this.envelope.id), this.models());
    },

    archive: function () {
      if (!this.envelope) return;
      this.actions.archiveModels(this.models(), this.collection.criteria.view !== 'archived');
      this.after();
    },

    unarchive: function () {
      this.archive();
    },

    mute: function () {
      if (this.envelope) this.actions.muteTopic(this.envelope.topic);
    }
  });
})(window.herald = window.herald || {});
