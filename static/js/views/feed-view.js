/*
 * The feed: newest first, one row per group (feed-item.js: a run by its
 * `correlation_id`, else the same topic and title), in three tabs:
 * "Inbox" (everything but machine chatter), "For you" (private to the user)
 * and "Activity" (low-severity steps of runs: herald.isActivity). In the
 * inbox, critical unread rows are pinned on top.
 *
 * One Tab stop for the whole list (a roving tabindex): the current row's
 * controls are in the Tab order, the others are not; j/k and the arrows move
 * (feed-keys.js). Rows can be selected (checkbox, `x`, shift-click for a
 * range) for the bulk bar (bulk-bar.js); actions on a selection, or on the
 * current row, report what they did with an Undo (undo-view.js).
 *
 * A live notification, a read change or the oldest let go touch only their
 * own row; anything else draws the list again whole (once per frame at most),
 * keeping the focus on the same control of the same row.
 */
(function (herald) {
  'use strict';

  var TABS = ['inbox', 'foryou', 'activity'];
  herald.FEED_TABS = TABS;

  herald.FeedView = Backbone.View.extend({
    events: {
      'click li.notification': 'clickItem',
      'focusin li.notification': 'focusItem',
      'click .select': 'clickSelect',
      'click .toggle-read': 'toggleRead',
      'click .archive': 'archive',
      'click .unarchive': 'unarchive',
      'click .unsnooze': 'unsnooze',
      'click .mute': 'mute',
      'click .snooze-for': 'snoozeFor',
      'click .snooze-custom': 'snoozeCustom'
    },

    initialize: function (options) {
      this.empty = options.empty;
      this.tab = 'inbox';
      this.groups = {};    // the id a row shows (its newest) -> the models it stands for
      this.byKey = {};     // group key -> the same models
      this.selected = {};  // group key -> true
      this.current = null; // the key of the current row (the list's one Tab stop)
      this.scheduleRender = _.bind(function () {
        if (this.pending) return;
        this.pending = true;
        window.requestAnimationFrame(_.bind(function () { this.pending = false; this.render(); }, this));
      }, this);
      herald.fillSnoozeMenusOpening(this.el);
      this.listenTo(this.collection, 'add', this.addOne);
      this.listenTo(this.collection, 'change:read', this.showRead);
      this.listenTo(this.collection, 'remove', this.removeOne);
      this.listenTo(this.collection, 'reset seen', this.scheduleRender);
      this.timer = setInterval(_.bind(this.refreshTimes, this), 1000);
      this.seeLater = _.bind(this.see, this);
      document.addEventListener('visibilitychange', this.seeLater);
    },

    key: function (model) {
      var run = model.get('correlation_id');
      return run ? 'run\n' + run : 'same\n' + model.get('topic') + '\n' + model.get('title');
    },

    showTab: function (tab) {
      this.tab = _.contains(TABS, tab) ? tab : 'inbox';
      this.selected = {};
      this.render();
      this.trigger('selection', this.selection());
    },

    // Which tab a group belongs to; `d` is herald.describeGroup's.
    inTab: function (d, tab) {
      if (tab === 'activity') return d.activity;
      if (tab === 'foryou') return d.mine;
      return !d.activity;
    },

    pinned: function (d) {
      return this.tab === 'inbox' && !d.read && d.json.severity === 'critical' &&
        this.collection.criteria.view === 'feed';
    },

    // Groups of the whole collection, newest first: {key: models}, in order.
    group: function () {
      var order = [], byKey = {}, self = this;
      this.collection.each(function (model) {
        var key = self.key(model);
        if (byKey[key]) byKey[key].push(model); else order.push(byKey[key] = [model]);
      });
      this.byKey = byKey;
      return order;
    },

    // Unread rows per tab (for the tab bar).
    counts: function () {
      var counts = {inbox: 0, foryou: 0, activity: 0}, self = this;
      _.each(this.byKey, function (group) {
        var d = herald.describeGroup(group, self.collection);
        if (d.read) return;
        _.each(TABS, function (tab) { if (self.inTab(d, tab)) counts[tab] += 1; });
      });
      return counts;
    },

    draw: function (group) {
      var key = this.key(group[0]), d = herald.describeGroup(group, this.collection);
      if (!this.inTab(d, this.tab)) return null;
      var item = herald.drawFeedItem(group, key, d, {
        view: this.collection.criteria.view, selected: Boolean(this.selected[key]), pinned: this.pinned(d),
        until: this.collection.criteria.view === 'snoozed' && this.collection.snoozed[group[0].id]
      });
      if (key === this.current) this.roving(item, true);
      return item;
    },

    render: function () {
      if (this.pending) return this;  // a whole draw is on its way
      var focus = this.focused(), self = this;
      var menu = this.$('details.snooze[open]').closest('li.notification').attr('data-key');
      self.groups = {};
      var items = [], pinned = [];
      _.each(self.group(), function (group) {
        var item = self.draw(group);
        if (!item) return;
        self.groups[group[0].id] = group;
        (/\bpinned\b/.test(item.className) ? pinned : items).push(item);
      });
      self.$el.empty().append(pinned.concat(items));
      if (!self.itemByKey(self.current).length) self.setCurrent(self.firstKey(), false);
      if (menu) self.itemByKey(menu).find('details.snooze').prop('open', true);
      self.showEmpty();
      if (focus) self.refocus(focus);
      self.see();
      self.trigger('rendered');
      return self;
    },

    showEmpty: function () {
      var loading = this.collection.loaded === false;
      this.empty.toggle(loading || !this.el.querySelector('li.notification'));
      this.$el.attr('aria-busy', loading ? 'true' : null);
    },

    // One notification joined the view: a new row, or a group grown by one.
    addOne: function (model, collection, options) {
      if (this.pending || (options && options.older)) return this.scheduleRender();
      var key = this.key(model), group = this.byKey[key];
      var old = this.itemByKey(key);
      if (group) {
        delete this.groups[group[0].id];
        if (herald.compareIds(model.id, group[0].id) > 0) {
          group.unshift(model);  // the usual case: the newest of its group
        } else {
          group.push(model);
          group.sort(function (a, b) { return herald.compareIds(b.id, a.id); });
        }
      } else {
        group = this.byKey[key] = [model];
      }
      this.replace(old, group);
      this.see();
    },

    // Draw `group` again in place of `old` (a jQuery row, maybe none), where it goes.
    replace: function (old, group) {
      var key = this.key(group[0]);
      var focus = old.length ? this.focused() : null;
      var menu = old.find('details.snooze').prop('open');
      var item = this.draw(group);
      old.remove();
      if (item) {
        this.groups[group[0].id] = group;
        this.el.insertBefore(item, this.itemAfter(group[0].id, /\bpinned\b/.test(item.className)));
        if (menu) $(item).find('details.snooze').prop('open', true);
        if (focus) this.refocus(_.extend(focus, {key: key}));
      }
      if (!this.itemByKey(this.current).length) this.setCurrent(this.firstKey(), false);
      this.showEmpty();
      this.trigger('changed');
    },

    // The row a row for `id` goes before (null: the end): pinned rows first, then
    // the rest, each newest first. Usually the first; else found by bisection.
    itemAfter: function (id, pinned) {
      var items = this.el.querySelectorAll(pinned ? 'li.notification.pinned' : 'li.notification:not(.pinned)');
      if (!items.length) {
        return pinned ? this.el.querySelector('li.notification') : null;
      }
      var place = herald.placeNewestFirst(items.length, function (i) { return items[i].getAttribute('data-id'); }, id);
      if (items[place]) return items[place];
      return pinned ? this.el.querySelector('li.notification:not(.pinned)') : null;
    },

    // One notification left the view: its group shrinks, or its row goes.
    removeOne: function (model, collection, options) {
      if (this.pending || !(options && options.trimmed)) return this.scheduleRender();
      var key = this.key(model), group = this.byKey[key];
      var old = this.itemByKey(key);
      if (!group || !old.length || $.contains(old[0], document.activeElement) ||
          old.find('details.snooze').prop('open')) {
        return this.scheduleRender();
      }
      var rest = _.without(group, model);
      delete this.groups[group[0].id];
      if (rest.length) {
        this.byKey[key] = rest;
        this.replace(old, rest);
      } else {
        delete this.byKey[key];
        old.remove();
        this.trigger('changed');
      }
    },

    // Read or unread: draw the row of that notification's group again.
    showRead: function (model) {
      if (this.pending) return;
      var group = this.byKey[this.key(model)];
      if (!group) return this.scheduleRender();
      this.replace(this.itemByKey(this.key(model)), group);
    },

    // ---- The current row and the focus -------------------------------------------

    itemByKey: function (key) {
      if (!key) return $();
      return this.$('li.notification[data-key="' + CSS.escape(String(key)) + '"]');
    },

    itemById: function (id) {
      return this.$('li.notification[data-id="' + CSS.escape(String(id)) + '"]');
    },

    firstKey: function () {
      var first = this.el.querySelector('li.notification');
      return first ? first.getAttribute('data-key') : null;
    },

    // Put a row's controls in the Tab order (or out of it).
    roving: function (item, on) {
      _.each(item.querySelectorAll('button, input, summary'), function (control) {
        control.tabIndex = on ? 0 : -1;
      });
      item.classList.toggle('current', on);
    },

    setCurrent: function (key, focus) {
      var old = this.itemByKey(this.current);
      if (old.length && this.current !== key) this.roving(old[0], false);
      this.current = key;
      var item = this.itemByKey(key);
      if (!item.length) return item;
      this.roving(item[0], true);
      if (focus) item.find('button.open').trigger('focus');
      return item;
    },

    // Move the current row by `delta` rows (the focus follows).
    move: function (delta) {
      var items = this.$('li.notification'), at = items.index(this.itemByKey(this.current));
      if (!items.length) return;
      var next = at < 0 ? 0 : Math.max(0, Math.min(items.length - 1, at + delta));
      var item = items.eq(next);
      this.setCurrent(item.attr('data-key'), true);
      item[0].scrollIntoView({block: 'nearest'});
    },

    focusItem: function (event) {
      var key = $(event.currentTarget).attr('data-key');
      if (key !== this.current) this.setCurrent(key, false);
    },

    // Which control of which row has the focus, to give it back after a draw.
    focused: function () {
      var active = document.activeElement;
      if (!active || !$.contains(this.el, active)) return null;
      var item = $(active).closest('li.notification');
      var classes = (active.className || '').split(/\s+/);
      return {key: item.attr('data-key'), index: item.index(),
              control: active.tagName.toLowerCase() + (classes[0] ? '.' + classes[0] : '')};
    },

    refocus: function (focus) {
      var item = this.itemByKey(focus.key);
      if (!item.length) {  // the row left the view: the one now in its place
        item = this.$('li.notification').eq(Math.min(focus.index, this.$('li.notification').length - 1));
        focus.control = 'button.open';
      }
      if (!item.length) return;
      this.setCurrent(item.attr('data-key'), false);
      var control = item.find(focus.control).first();
      (control.length ? control : item.find('button.open')).trigger('focus');
    },

    // Shown to the user: the newest row, while the page is visible.
    see: function () {
      if (document.visibilityState !== 'visible' || this.collection.criteria.view !== 'feed') return;
      var first = this.el.querySelector('li.notification:not(.pinned)') || this.el.querySelector('li.notification');
      var newest = _.reduce(this.el.querySelectorAll('li.notification'), function (best, item) {
        var id = item.getAttribute('data-id');
        return !best || herald.compareIds(id, best) > 0 ? id : best;
      }, first ? first.getAttribute('data-id') : null);
      if (newest) this.collection.markSeen(newest);
    },

    // ---- Selection ---------------------------------------------------------------

    selection: function () {
      return _.filter(_.keys(this.selected), function (key) { return this.byKey[key]; }, this);
    },

    select: function (keys, on) {
      _.each(keys, function (key) {
        if (on) this.selected[key] = true; else delete this.selected[key];
        var item = this.itemByKey(key);
        item.toggleClass('selected', on).find('input.select').prop('checked', on);
      }, this);
      this.trigger('selection', this.selection());
    },

    toggleSelect: function (key, range) {
      var on = !this.selected[key];
      if (range && this.anchor && this.itemByKey(this.anchor).length) {
        var items = this.$('li.notification'), a = items.index(this.itemByKey(this.anchor));
        var b = items.index(this.itemByKey(key));
        var keys = items.slice(Math.min(a, b), Math.max(a, b) + 1).map(function () {
          return this.getAttribute('data-key');
        }).get();
        this.select(keys, true);
      } else {
        this.select([key], on);
      }
      this.anchor = key;
    },

    selectAllShown: function () {
      this.select(this.$('li.notification').map(function () { return this.getAttribute('data-key'); }).get(), true);
    },

    clearSelection: function () {
      this.select(this.selection(), false);
    },

    // The models an action applies to: the selection, else the current row's.
    targets: function () {
      var keys = this.selection();
      if (!keys.length && this.current) keys = [this.current];
      return _.flatten(_.map(keys, function (key) { return this.byKey[key] || []; }, this));
    },

    clickSelect: function (event) {
      event.stopPropagation();
      var key = $(event.currentTarget).closest('li.notification').attr('data-key');
      event.preventDefault();  // the state is ours: drawn by select()
      this.toggleSelect(key, event.shiftKey);
    },

    // ---- Actions -------------------------------------------------------------------

    modelsFor: function (event) {
      var key = $(event.currentTarget).closest('li.notification').attr('data-key');
      return this.byKey[key] || [];
    },

    // A click anywhere on a row but its actions and checkbox opens it (and marks it read).
    clickItem: function (event) {
      if ($(event.target).closest('.actions, .select').length) return;
      var key = $(event.currentTarget).attr('data-key');
      if (event.shiftKey || event.ctrlKey || event.metaKey) {
        event.preventDefault();
        return this.toggleSelect(key, event.shiftKey);
      }
      this.setCurrent(key, false);
      this.openModels(this.byKey[key] || []);
    },

    openCurrent: function () {
      this.openModels(this.byKey[this.current] || []);
    },

    openModels: function (models) {
      if (!models.length) return;
      _.each(models, function (model) { this.collection.markRead(model); }, this);
      this.trigger('open', models[0].id, models);
    },

    // The actions, on `models` (default: the targets); each says what it did, with an Undo.
    setRead: function (read, models) {
      models = models || this.targets();
      var collection = this.collection, change = collection.setReadChanging(models, read);
      if (!change.ids.length) return;
      var again = _.filter(models, function (m) { return _.contains(change.ids, m.id); });
      this.trigger('did', (read ? 'Marked read: ' : 'Marked unread: ') + herald.countWords(change.ids.length),
                   function () { return collection.setReadFor(again, !read); });
    },

    toggleRead: function (event) {
      var models = event ? this.modelsFor(event) : this.targets();
      this.setRead(!_.every(models, function (m) { return m.get('read'); }), models);
    },

    archiveModels: function (models, archived) {
      models = models || this.targets();
      if (!models.length) return;
      var collection = this.collection;
      collection.archive(models, archived !== false);
      this.clearSelection();
      this.trigger('did', (archived === false ? 'Moved to the inbox: ' : 'Archived: ') +
                   herald.countWords(models.length),
                   function () { return collection.archive(models, archived === false); });
    },

    archive: function (event) { this.archiveModels(this.modelsFor(event), true); },
    unarchive: function (event) { this.archiveModels(this.modelsFor(event), false); },

    unsnooze: function (event) {
      var models = this.modelsFor(event);
      this.collection.unsnooze(models);
    },

    snoozeModels: function (models, until) {
      if (!models.length) return;
      var collection = this.collection;
      collection.snooze(models, until);
      this.clearSelection();
      this.trigger('did', 'Snoozed until ' + herald.exactTime(new Date(until)) + ': ' +
                   herald.countWords(models.length),
                   function () { return collection.unsnooze(models); });
    },

    snoozeFor: function (event) {
      var models = this.modelsFor(event);
      this.snoozeModels(models, Number($(event.currentTarget).attr('data-until')));
    },

    snoozeCustom: function (event) {
      var input = $(event.currentTarget).closest('.menu').find('.snooze-at');
      var until = input.val() ? new Date(input.val()).getTime() : NaN;
      if (!(until > Date.now())) {
        input.attr('aria-invalid', 'true').trigger('focus');
        herald.dispatcher.trigger('action:error', 'Choose a time in the future to snooze until.');
        return;
      }
      this.snoozeModels(this.modelsFor(event), until);
    },

    // Open the snooze menu of the current row (the `s` key).
    openSnooze: function () {
      var menu = this.itemByKey(this.current).find('details.snooze');
      if (!menu.length) return;
      menu.prop('open', true);
      menu.find('.snooze-for').first().trigger('focus');
    },

    mute: function (event) {
      var topic = $(event.currentTarget).closest('li.notification').attr('data-topic');
      var collection = this.collection, self = this;
      collection.mute(topic).then(function () {
        self.trigger('did', 'Muted ' + topic + ' (see Preferences)', function () { return collection.unmute(topic); });
      }, function () { /* told as action:error */ });
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
      document.removeEventListener('visibilitychange', this.seeLater);
      return Backbone.View.prototype.remove.apply(this, arguments);
    }
  });

  // "1 notification", "3 notifications".
  herald.countWords = function (n) {
    return n + (n === 1 ? ' notification' : ' notifications');
  };
})(window.herald = window.herald || {});
