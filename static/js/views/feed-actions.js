/*
 * The feed's actions: what the user does to its rows, and the state that takes.
 * herald.FeedView (feed-view.js) makes one, `feed.actions`, and hands it its
 * row events; the keys (feed-keys.js) and the bulk bar (bulk-bar.js) call it
 * as `feed.actions`.
 *
 * Rows can be selected for the bulk bar (feed-selection.js, which adds the
 * selection's methods here). Actions apply to the selection, else to the current row;
 * each says what it did with an inverse for Undo (the feed's `did` event,
 * shown by undo-view.js); one that failed leaves a note with a Retry on its
 * rows. It also keeps the user's place across the feed's draws (the focus)
 * and says whether a tab shows an unread row (the bar's "Mark all read").
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
    this.range = null;   // the keys of the Shift+J/K range (feed-selection.js)
    this.leaving = {};   // group key -> true: archived or snoozed, the server's answer awaited
    this.failures = {};  // group key -> {text, retryable, retry}: an action that failed on that row
    feed.listenTo(herald.dispatcher, 'recovered', _.bind(this.redoFailed, this));
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

    // Whether `tab` shows an unread row, Activity's steps included ("Mark all read"
    // takes them too). The counters' numbers are read-state.js's unreadCounts.
    hasUnread: function (tab) {
      var feed = this.feed;
      return _.some(feed.byKey, function (group) {
        if (_.every(group, function (m) { return m.get('read'); })) return false;
        return feed.inTab({mine: _.some(group, function (m) { return Boolean(m.get('user')); }),
                           activity: _.every(group, function (m) { return herald.isActivity(m.attributes); })}, tab);
      });
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
    // for, with a Retry (the change was not kept: a read change is put back). While
    // Redis is known to be away it is not sent at all: refused at once, nothing shown
    // done (herald.unsaved), and redone by itself when the page hears `recovered`.
    attempt: function (models, words, action, inverse) {
      var self = this, feed = self.feed;
      var keys = _.uniq(_.map(models, function (model) { return feed.key(model); }));
      _.each(keys, function (key) { self.showFailure(key, null); });
      var refused = herald.unsaved ? herald.unsaved() : null;
      var sent = refused ? Promise.reject(refused) : Promise.resolve().then(action);
      // Answers come back in any order (read changes by the socket, the rest by REST):
      // the Undo bar offers the action asked last, never an earlier one answered later.
      var asked = self.asked = (self.asked || 0) + 1;
      return sent.then(function () {
        if (!words || asked < (self.offered || 0)) return;
        self.offered = asked;
        feed.trigger('did', words, inverse);
      }, function (error) {
        var text = herald.t('Not done: {why}', {why: herald.errorText(error)});
        if (error && error.retryable) text += ' ' + herald.t('It is redone by itself when Herald can save again.');
        // One retry for all the rows of this action: redone once, however many rows.
        var failure = {text: text, retryable: Boolean(error && error.retryable),
                       retry: function () { self.attempt(models, words, action, inverse); }};
        _.each(keys, function (key) { self.showFailure(key, failure); });
      });
    },

    // Redis (or Herald) is back: redo, once each, the actions that failed for that.
    redoFailed: function () {
      var failures = _.uniq(_.filter(_.values(this.failures), function (f) { return f.retryable; }));
      _.each(failures, function (failure) { failure.retry(); });
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
      this.leave(models, this.attempt(models, archived === false ? herald.t('Moved to the inbox: {count}', count) : herald.t('Archived: {count}', count),
                   function () { return collection.archive(models, archived !== false); },
                   function () { return collection.archive(models, archived === false); }));
    },

    // `models` are leaving the view (`done`: the promise of the action). When they are the
    // current row's, the next row becomes current at once (the open detail follows), not
    // when the server's answer takes the row away: a key pressed meanwhile acts on the
    // next row, not on this one again (keys faster than the server were lost).
    leave: function (models, done) {
      var self = this, feed = self.feed, key = feed.current;
      if (!key || !_.some(models, function (m) { return feed.key(m) === key; })) return;
      self.leaving[key] = true;
      Promise.resolve(done).then(function () { delete self.leaving[key]; });
      var items = feed.$('li.notification'), at = items.index(feed.itemByKey(key));
      var staying = function (i) { return i >= 0 && i < items.length && !self.leaving[items[i].getAttribute('data-key')]; };
      var next = _.find(_.range(at + 1, items.length).concat(_.range(at - 1, -1, -1)), staying);
      if (next !== undefined) feed.moveTo(items[next].getAttribute('data-key'), $.contains(feed.el, document.activeElement));
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
      this.leave(models, this.attempt(models, herald.t('Snoozed until {time}: {count}', {time: herald.exactTime(new Date(until)), count: herald.countWords(models.length)}),
                   function () { return collection.snooze(models, until); },
                   function () { return collection.unsnooze(models); }));
    },

    snoozeFor: function (event) {
      var models = this.modelsFor(event);
      this.snoozeModels(models, Number($(event.currentTarget).attr('data-until')));
    },

    snoozeCustom: function (event) {
      var until = herald.snoozeMenuUntil(event.currentTarget);
      if (until) this.snoozeModels(this.modelsFor(event), until);
    },

    // Open the snooze menu of the current row (the `s` key).
    openSnooze: function () {
      herald.openSnoozeMenu(herald.snoozeMenuOf(this.feed.itemByKey(this.feed.current)[0]));
    },

    // A row's Snooze button, used for the first time: its menu made and opened, the
    // first choice focused. (Not the row's click too: the button is gone by then.)
    openSnoozeOf: function (event) {
      event.stopPropagation();
      herald.openSnoozeMenu(herald.snoozeMenuOf($(event.currentTarget).closest('li.notification')[0]));
    },

    mute: function (event) {
      this.muteTopic($(event.currentTarget).closest('li.notification').attr('data-topic'));
    },

    // Mute `topic` (a row's button, or the `m` key), with an Undo.
    muteTopic: function (topic) {
      if (!topic) return;
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
