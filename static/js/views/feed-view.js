/*
 * The feed: newest first, one item per notification, or per run of
 * notifications with the same topic and title (collapsed, with a count).
 *
 * Each item is keyboard-operable: its title is a button that opens the
 * detail (and marks it read); beside it, mark read/unread, archive (or bring
 * back) and snooze. Unread items are bold with a dot, not only a shade.
 *
 * A live notification, a read change or the oldest let go touch only their
 * own item; anything else (a new view, an older page, something archived)
 * draws the list again whole (batched to one draw per frame), keeping the
 * focus on the same control of the same item.
 * Every text field is escaped (`_.escape`): a title holding HTML shows as the
 * literal text it is. Templates are plain functions, not `_.template`, which
 * compiles with `new Function` and so would need CSP 'unsafe-eval'.
 */
(function (herald) {
  'use strict';

  var e = _.escape;

  herald.SEVERITY_ICONS = {info: 'ℹ', success: '✓', warning: '⚠', error: '✖', critical: '‼'};

  herald.FeedView = Backbone.View.extend({
    item: function (n, group, view) {
      var count = group.length, until = view === 'snoozed' && this.collection.snoozed[n.id];
      var actions = '<button type="button" class="toggle-read">' +
          (n.read ? 'Mark unread' : 'Mark read') + '</button>';
      if (view === 'archived') {
        actions += '<button type="button" class="unarchive">Move to inbox</button>';
      } else if (view === 'snoozed') {
        actions += '<button type="button" class="unsnooze">Wake now</button>';
      } else {
        actions += '<button type="button" class="archive">Archive</button>' + herald.snoozeMenu();
      }
      return '<span class="dot" aria-hidden="true"></span>' +
        '<div class="main">' +
          '<button type="button" class="open" aria-label="' +
            e((n.read ? '' : 'Unread: ') + n.title + (count > 1 ? ', ' + count + ' times' : '')) + '">' +
            '<span class="title">' + e(n.title) + '</span>' +
            (count > 1 ? ' <span class="count" aria-hidden="true">×' + count + '</span>' : '') +
          '</button>' +
          '<div class="meta">' +
            '<span class="severity"><span class="icon" aria-hidden="true">' +
              e(herald.SEVERITY_ICONS[n.severity] || '') + '</span> ' + e(n.severity) + '</span>' +
            '<span class="topic">' + e(n.topic) + '</span>' +
            '<time datetime="' + e(n.ts) + '"></time>' +
            (until ? '<span class="until">back ' + e(herald.exactTime(new Date(until))) + '</span>' : '') +
          '</div>' +
          (n.body ? '<div class="body">' + e(n.body) + '</div>' : '') +
        '</div>' +
        '<div class="actions" aria-label="Actions">' + actions + '</div>';
    },

    events: {
      'click li.notification': 'openItem',
      'click .toggle-read': 'toggleRead',
      'click .archive': 'archive',
      'click .unarchive': 'unarchive',
      'click .unsnooze': 'unsnooze',
      'click .snooze-for': 'snoozeFor',
      'click .snooze-custom': 'snoozeCustom'
    },

    initialize: function (options) {
      this.empty = options.empty;
      this.groups = {};  // the id an item shows (its newest) -> the models it stands for
      this.byKey = {};   // topic + title -> the same group
      this.scheduleRender = _.bind(function () {
        if (this.pending) return;
        this.pending = true;
        window.requestAnimationFrame(_.bind(function () { this.pending = false; this.render(); }, this));
      }, this);
      // A live notification, a read change or the oldest let go redraw one item;
      // the rest (a new view, an older page, something archived) the whole list,
      // once per frame at most.
      herald.fillSnoozeMenusOpening(this.el);
      this.listenTo(this.collection, 'add', this.addOne);
      this.listenTo(this.collection, 'change:read', this.showRead);
      this.listenTo(this.collection, 'remove', this.removeOne);
      this.listenTo(this.collection, 'reset', this.scheduleRender);
      this.timer = setInterval(_.bind(this.refreshTimes, this), 1000);
    },

    key: function (model) {
      return model.get('topic') + '\n' + model.get('title');
    },

    // Runs of the same topic and title become one group, newest first.
    group: function () {
      var groups = [], byKey = {}, self = this;
      this.collection.each(function (model) {
        var key = self.key(model);
        if (byKey[key]) byKey[key].push(model); else groups.push(byKey[key] = [model]);
      });
      this.byKey = byKey;
      return groups;
    },

    // The <li> of one group.
    drawItem: function (group) {
      var newest = group[0], read = _.every(group, function (m) { return m.get('read'); });
      var item = document.createElement('li');
      item.className = 'notification severity-' + newest.get('severity') + (read ? '' : ' unread');
      item.setAttribute('data-id', newest.id);
      item.setAttribute('data-topic', newest.get('topic'));
      item.innerHTML = this.item(_.extend({body: ''}, newest.toJSON(), {read: read}), group,
                                 this.collection.criteria.view);
      var time = item.querySelector('time');
      if (time) {
        time.textContent = newest.relativeTime();
        time.title = newest.exactTime();
      }
      return item;
    },

    render: function () {
      if (this.pending) return this;  // a whole draw is on its way
      var focus = this.focused();
      var menu = this.$('details.snooze[open]').closest('li.notification').attr('data-id');
      var self = this;
      self.groups = {};
      var items = _.map(self.group(), function (group) {
        self.groups[group[0].id] = group;
        return self.drawItem(group);
      });
      self.$el.empty().append(items);
      if (menu) self.itemById(menu).find('details.snooze').prop('open', true);
      self.empty.toggle(self.collection.isEmpty());
      if (focus) self.refocus(focus);
      self.trigger('rendered');
      return self;
    },

    // One notification joined the view: a new item, or a group grown by one.
    addOne: function (model, collection, options) {
      if (this.pending || (options && options.older)) return this.scheduleRender();
      var key = this.key(model), group = this.byKey[key];
      var old = group ? this.itemById(group[0].id) : $();
      if (group) {
        delete this.groups[group[0].id];
        if (herald.compareIds(model.id, group[0].id) > 0) {
          group.unshift(model);  // the usual case: the newest of its run
        } else {
          group.push(model);
          group.sort(function (a, b) { return herald.compareIds(b.id, a.id); });
        }
      } else {
        group = this.byKey[key] = [model];
      }
      this.groups[group[0].id] = group;
      var item = this.drawItem(group);
      var focus = old.length ? this.focused() : null;
      var menu = old.find('details.snooze').prop('open');
      old.remove();
      this.el.insertBefore(item, this.itemAfter(group[0].id));
      if (menu) $(item).find('details.snooze').prop('open', true);
      if (focus) this.refocus(_.extend(focus, {id: group[0].id}));
      this.empty.toggle(false);
    },

    // The item an item for `id` goes before (null: the end): items are in id order
    // of their newest, newest first. Usually the first; else found by bisection.
    itemAfter: function (id) {
      var first = this.el.querySelector('li.notification');
      if (!first || herald.compareIds(first.getAttribute('data-id'), id) < 0) return first;
      var items = this.el.querySelectorAll('li.notification');
      var place = herald.placeNewestFirst(items.length, function (i) { return items[i].getAttribute('data-id'); }, id);
      return items[place] || null;
    },

    // One notification left the view. The oldest let go to keep the page small
    // (`trimmed`) leave their items, or shrink their group's count, one by one;
    // anything else (archived, snoozed: maybe the item in use) draws the list
    // again, which keeps the focus in place.
    removeOne: function (model, collection, options) {
      if (this.pending || !(options && options.trimmed)) return this.scheduleRender();
      var key = this.key(model), group = this.byKey[key];
      var old = group && this.groups[group[0].id] ? this.itemById(group[0].id) : $();
      if (!old.length || $.contains(old[0], document.activeElement) ||
          old.find('details.snooze').prop('open')) {
        return this.scheduleRender();
      }
      var rest = _.without(group, model);
      delete this.groups[group[0].id];
      if (rest.length) {
        this.byKey[key] = this.groups[rest[0].id] = rest;
        old.replaceWith(this.drawItem(rest));
      } else {
        delete this.byKey[key];
        old.remove();
      }
    },

    // Read or unread: redraw the item of that notification's group.
    showRead: function (model) {
      if (this.pending) return;
      var group = this.byKey[this.key(model)];
      if (!group || !this.groups[group[0].id]) return this.scheduleRender();
      var old = this.itemById(group[0].id);
      if (!old.length) return this.scheduleRender();
      var focus = this.focused(), menu = old.find('details.snooze').prop('open');
      var item = this.drawItem(group);
      old.replaceWith(item);
      if (menu) $(item).find('details.snooze').prop('open', true);
      if (focus && focus.id === group[0].id) this.refocus(focus);
    },

    // Which control of which item has the focus, to give it back after a draw.
    focused: function () {
      var active = document.activeElement;
      if (!active || !$.contains(this.el, active)) return null;
      var item = $(active).closest('li.notification');
      var classes = (active.className || '').split(/\s+/);
      return {id: item.attr('data-id'), index: item.index(),
              control: active.tagName.toLowerCase() + (classes[0] ? '.' + classes[0] : '')};
    },

    itemById: function (id) {
      return this.$('li.notification[data-id="' + CSS.escape(String(id)) + '"]');
    },

    refocus: function (focus) {
      var item = this.itemById(focus.id);
      if (!item.length) {  // the item left the view: the one now in its place
        item = this.$('li.notification').eq(Math.min(focus.index, this.$('li.notification').length - 1));
        focus.control = 'button.open';
      }
      var control = item.find(focus.control).first();
      (control.length ? control : item.find('button.open')).trigger('focus');
    },

    modelsFor: function (event) {
      var id = $(event.currentTarget).closest('li.notification').attr('data-id');
      return this.groups[id] || [];
    },

    // A click anywhere on an item but its actions opens it (and marks it read).
    openItem: function (event) {
      if ($(event.target).closest('.actions').length) return;
      var models = this.modelsFor(event);
      if (!models.length) return;
      _.each(models, function (model) { this.collection.markRead(model); }, this);
      this.trigger('open', models[0].id, models);
    },

    toggleRead: function (event) {
      var models = this.modelsFor(event);
      var read = !_.every(models, function (m) { return m.get('read'); });
      this.collection.setReadFor(models, read);
    },

    archive: function (event) { this.collection.archive(this.modelsFor(event), true); },
    unarchive: function (event) { this.collection.archive(this.modelsFor(event), false); },
    unsnooze: function (event) { this.collection.unsnooze(this.modelsFor(event)); },

    snoozeFor: function (event) {
      this.collection.snooze(this.modelsFor(event), Number($(event.currentTarget).attr('data-until')));
    },

    snoozeCustom: function (event) {
      var input = $(event.currentTarget).closest('.menu').find('.snooze-at');
      var until = input.val() ? new Date(input.val()).getTime() : NaN;
      if (!(until > Date.now())) {
        input.attr('aria-invalid', 'true').trigger('focus');
        herald.dispatcher.trigger('action:error', 'Choose a time in the future to snooze until.');
        return;
      }
      this.collection.snooze(this.modelsFor(event), until);
    },

    // Relative times, kept current (only the texts that changed are written).
    refreshTimes: function () {
      var now = Date.now(), groups = this.groups;
      this.$('li.notification').each(function () {
        var group = groups[this.getAttribute('data-id')], time = this.querySelector('time');
        if (!group || !time) return;
        var text = group[0].relativeTime(now);
        if (time.textContent !== text) time.textContent = text;
      });
    },

    remove: function () {
      clearInterval(this.timer);
      return Backbone.View.prototype.remove.apply(this, arguments);
    }
  });
})(window.herald = window.herald || {});
