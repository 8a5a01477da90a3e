/*
 * The feed's actions: what the user does to its rows, and the state that takes.
 * herald.FeedView (feed-view.js) makes one, `feed.actions`, and hands it its
 * row events; the keys (feed-keys.js) and the bulk bar (bulk-bar.js) call it
 * as `feed.actions`.
 *
 * Rows can be selected (checkbox, `x`, shift-click for a range) for the bulk
 * bar (bulk-bar.js). Actions apply to the selection, else to the current row;
 * each says what it did with an inverse for Undo (the feed's `did` event,
 * shown by undo-view.js); one that failed leaves a note with a Retry on its
 * rows. It also keeps the user's place across the feed's draws (the focus)
 * and counts the unread rows of each tab (for the bar's tabs).
 *
 * Its state is its own: the selection (`selected`, `anchor`) and the failed
 * actions (`failures`). It knows the feed only through:
 *   feed.el, feed.$(selector), feed.itemByKey(key)    its rows
 *   feed.collection, feed.byKey, feed.key(model)      the notifications, by group
 *   feed.inTab(d, tab)                                which tab a group belongs in
 *   feed.current, feed.setCurrent(key, focus)         the current row
 *   feed.trigger(event, ...)                          'selection', 'open', 'did'
 */
(function (herald) {
  'use strict';

  herald.FeedActions = function (feed) {
    this.feed = feed;
    this.selected = {};  // group key -> true
    this.anchor = null;  // the key a shift-click selects a range from
    this.failures = {};  // group key -> {text, retry}: an action that failed on that row
  };

  _.extend(herald.FeedActions.prototype, {
    // ---- The user's place, and the counts ----------------------------------------

    // Which control of which row has the focus, to give it back after a draw.
    focused: function () {
      var active = document.activeElement;
      if (!active || !$.contains(this.feed.el, active)) return null;
      var item = $(active).closest('li.notification');
      var classes = (active.className || '').split(/\s+/);
      return {key: item.attr('data-key'), index: item.index(),
              control: active.tagName.toLowerCase() + (classes[0] ? '.' + classes[0] : '')};
    },

    refocus: function (focus) {
      var feed = this.feed, item = feed.itemByKey(focus.key);
      if (!item.length) {  // the row left the view: the one now in its place
        item = feed.$('li.notification').eq(Math.min(focus.index, feed.$('li.notification').length - 1));
        focus.control = 'button.open';
      }
      if (!item.length) return;
      feed.setCurrent(item.attr('data-key'), false);
      var control = item.find(focus.control).first();
      (control.length ? control : item.find('button.open')).trigger('focus');
    },

    // Unread rows per tab (for the tab bar).
    counts: function () {
      var counts = {inbox: 0, foryou: 0, activity: 0}, feed = this.feed;
      _.each(feed.byKey, function (group) {
        // Only what the tabs need (not the whole description): this runs often.
        if (_.every(group, function (m) { return m.get('read'); })) return;
        var d = {mine: _.some(group, function (m) { return Boolean(m.get('user')); }),
                 activity: _.every(group, function (m) { return herald.isActivity(m.attributes); })};
        _.each(herald.FEED_TABS, function (tab) { if (feed.inTab(d, tab)) counts[tab] += 1; });
      });
      return counts;
    },

    // ---- Selection ---------------------------------------------------------------

    selection: function () {
      var byKey = this.feed.byKey;
      return _.filter(_.keys(this.selected), function (key) { return byKey[key]; });
    },

    isSelected: function (key) { return Boolean(this.selected[key]); },

    // Let the selection go without drawing it (the feed is about to be drawn whole).
    forgetSelection: function () { this.selected = {}; },

    select: function (keys, on) {
      _.each(keys, function (key) {
        if (on) this.selected[key] = true; else delete this.selected[key];
        var item = this.feed.itemByKey(key);
        item.toggleClass('selected', on).find('input.select').prop('checked', on);
      }, this);
      this.feed.trigger('selection', this.selection());
    },

    toggleSelect: function (key, range) {
      var feed = this.feed, on = !this.selected[key];
      if (range && this.anchor && feed.itemByKey(this.anchor).length) {
        var items = feed.$('li.notification'), a = items.index(feed.itemByKey(this.anchor));
        var b = items.index(feed.itemByKey(key));
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
      this.select(this.feed.$('li.notification').map(function () { return this.getAttribute('data-key'); }).get(), true);
    },

    clearSelection: function () {
      this.select(this.selection(), false);
    },

    // The models an action applies to: the selection, else the current row's.
    targets: function () {
      var byKey = this.feed.byKey, keys = this.selection();
      if (!keys.length && this.feed.current) keys = [this.feed.current];
      return _.flatten(_.map(keys, function (key) { return byKey[key] || []; }));
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
      return this.feed.byKey[key] || [];
    },

    // A click anywhere on a row but its actions and checkbox opens it (and marks it read).
    clickItem: function (event) {
      if ($(event.target).closest('.actions, .select').length) return;
      var key = $(event.currentTarget).attr('data-key');
      if (event.shiftKey || event.ctrlKey || event.metaKey) {
        event.preventDefault();
        return this.toggleSelect(key, event.shiftKey);
      }
      this.feed.setCurrent(key, false);
      this.openModels(this.feed.byKey[key] || []);
    },

    openCurrent: function () {
      this.openModels(this.feed.byKey[this.feed.current] || []);
    },

    openModels: function (models) {
      if (!models.length) return;
      var collection = this.feed.collection;
      _.each(models, function (model) { collection.markRead(model); });
      this.feed.trigger('open', models[0].id, models);
    },

    // Run `action` (a promise of the server's answer) for `models`. Done, say what was
    // done (`did`, with `inverse` for Undo); failed, say so beside each row it was
    // for, with a Retry (the change was not kept: a read change is put back).
    attempt: function (models, words, action, inverse) {
      var self = this, feed = self.feed;
      var keys = _.uniq(_.map(models, function (model) { return feed.key(model); }));
      _.each(keys, function (key) { self.showFailure(key, null); });
      return Promise.resolve().then(action).then(function () {
        if (words) feed.trigger('did', words, inverse);
      }, function (error) {
        var why = herald.errorText(error);
        var text = herald.t('Not done: {why}.', {why: why});
        _.each(keys, function (key) {
          self.showFailure(key, {text: text, retry: function () { self.attempt(models, words, action, inverse); }});
        });
      });
    },

    // The failed action noted on the row of `key` ({text, retry}), if any: drawn with it.
    failureOf: function (key) { return this.failures[key] || null; },

    // Show (or with null, clear) a failed action's note on the row of `key`.
    showFailure: function (key, failure) {
      if (failure) this.failures[key] = failure; else delete this.failures[key];
      var item = this.feed.itemByKey(key);
      item.find('.row-error').remove();
      if (failure && item.length) item.find('.main').append(herald.failureNote(failure));
    },

    retryRow: function (event) {
      event.stopPropagation();
      var key = $(event.currentTarget).closest('li.notification').attr('data-key');
      var failure = this.failures[key];
      if (failure) failure.retry();
    },

    // The actions, on `models` (default: the targets).
    setRead: function (read, models) {
      models = models || this.targets();
      var collection = this.feed.collection;
      var changing = _.filter(models, function (m) { return m.get('read') !== read; });
      if (!changing.length) return;
      var count = {count: herald.countWords(changing.length)};
      this.attempt(changing, read ? herald.t('Marked read: {count}', count) : herald.t('Marked unread: {count}', count),
                   function () { return collection.setReadInBatches(changing, read); },
                   function () { return collection.setReadFor(changing, !read); });
    },

    toggleRead: function (event) {
      var models = event ? this.modelsFor(event) : this.targets();
      this.setRead(!_.every(models, function (m) { return m.get('read'); }), models);
    },

    archiveModels: function (models, archived) {
      models = models || this.targets();
      if (!models.length) return;
      var collection = this.feed.collection;
      this.clearSelection();
      var count = {count: herald.countWords(models.length)};
      this.attempt(models, archived === false ? herald.t('Moved to the inbox: {count}', count) : herald.t('Archived: {count}', count),
                   function () { return collection.archive(models, archived !== false); },
                   function () { return collection.archive(models, archived === false); });
    },

    archive: function (event) { this.archiveModels(this.modelsFor(event), true); },
    unarchive: function (event) { this.archiveModels(this.modelsFor(event), false); },

    unsnooze: function (event) {
      var models = this.modelsFor(event), collection = this.feed.collection;
      this.attempt(models, null, function () { return collection.unsnooze(models); });
    },

    snoozeModels: function (models, until) {
      if (!models.length) return;
      var collection = this.feed.collection;
      this.clearSelection();
      this.attempt(models, herald.t('Snoozed until {time}: {count}', {time: herald.exactTime(new Date(until)), count: herald.countWords(models.length)}),
                   function () { return collection.snooze(models, until); },
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
        herald.dispatcher.trigger('action:error', herald.t('Choose a time in the future to snooze until.'));
        return;
      }
      this.snoozeModels(this.modelsFor(event), until);
    },

    // Open the snooze menu of the current row (the `s` key).
    openSnooze: function () {
      var menu = this.feed.itemByKey(this.feed.current).find('details.snooze');
      if (!menu.length) return;
      herald.fillSnoozeMenu(menu[0], Date.now());
      menu.prop('open', true);
      menu.find('.snooze-for').first().trigger('focus');
    },

    mute: function (event) {
      var topic = $(event.currentTarget).closest('li.notification').attr('data-topic');
      var collection = this.feed.collection, feed = this.feed;
      collection.mute(topic).then(function () {
        feed.trigger('did', herald.t('Muted {topic} (see Preferences)', {topic: topic}), function () { return collection.unmute(topic); });
      }, function () { /* told as action:error */ });
    }
  });

  // The note under a row whose action failed: what, and a Retry.
  herald.failureNote = function (failure) {
    var note = document.createElement('p');
    note.className = 'row-error';
    note.setAttribute('role', 'alert');
    note.textContent = failure.text + ' ';
    var retry = document.createElement('button');
    retry.type = 'button';
    retry.className = 'retry';
    retry.textContent = herald.t('Retry');
    note.appendChild(retry);
    return note;
  };

  // "1 notification", "3 notifications".
  herald.countWords = function (n) {
    return herald.tn('{n} notification', '{n} notifications', n);
  };
})(window.herald = window.herald || {});
