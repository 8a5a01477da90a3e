/*
 * "Select all N matching this view", as GitHub offers it: the page holds at most
 * the rows it loaded (1,000 and some), the view may match thousands more. Once
 * every row shown is selected, the bulk bar (bulk-bar.js) asks the server how
 * many match the view (its filters, search and tab: GET
 * /api/notification-state/matching) and, when that is more than is selected,
 * offers to select them all. Chosen, "Mark read", "Archive" (or "Move to
 * inbox") and "Snooze" run on the server by filter, not by id (POST …/matching),
 * and their Undo changes back exactly what they changed (POST …/matching/undo;
 * a snooze's gives ids snoozed before their earlier time back). The server takes
 * the newest 5,000 at most and says when more matched.
 *
 *   var matching = new herald.SelectMatching(bar);   // bar: the BulkBar
 *   matching.offer(keys);   // on every selection change
 *   matching.run('read');   // false when not chosen: the bar acts on the rows
 *   matching.run('snooze', until);   // until: ms
 */
(function (herald) {
  'use strict';

  var PATH = '/api/notification-state/matching';

  herald.SelectMatching = function (bar) {
    this.bar = bar;
    this.feed = bar.feed;
    this.counted = null;  // {query, count, more}: the server's count for the view
    this.active = null;   // the count chosen: actions go by filter
    this.asking = 0;      // the latest count asked for (an older answer is dropped)
  };

  _.extend(herald.SelectMatching.prototype, {
    // The view as the server's filters: the feed's query without paging, and the tab.
    query: function () {
      return _.extend(_.omit(this.feed.collection.query(), 'limit', 'before', 'after'), {tab: this.feed.tab});
    },

    queryString: function () {
      var query = this.query();
      return _.map(_.keys(query).sort(), function (k) {
        return encodeURIComponent(k) + '=' + encodeURIComponent(query[k]);
      }).join('&');
    },

    // The selection changed (`keys`: the rows selected): with every row shown selected,
    // ask how many match, and offer them; otherwise nothing is offered or chosen.
    offer: function (keys) {
      var rows = this.feed.shownKeys().length, self = this;  // drawn or not (feed-window.js)
      var all = keys.length > 0 && keys.length === rows;
      if (!all) return this.reset();
      var query = this.queryString(), asked = ++this.asking;
      if (this.counted && this.counted.query === query) return this.render();
      herald.client.get(PATH + '?' + query).then(function (reply) {
        if (asked !== self.asking) return;
        self.counted = {query: query, count: reply.count, more: reply.more};
        self.render();
      }, function () { /* no offer: the rows shown can still be acted on */ });
    },

    reset: function () {
      this.asking += 1;
      this.active = null;
      this.counted = null;
      this.render();
    },

    // The offer, or (chosen) what is selected, in the bar.
    render: function () {
      var button = this.bar.$('.select-matching'), counted = this.counted;
      var selected = this.feed.actions.targets().length;
      var n = counted ? counted.count.toLocaleString(herald.locale) : '';
      this.bar.$('.bulk-unread').prop('hidden', Boolean(this.active));
      if (this.active) {
        this.bar.$('.bulk-count').text(counted.more ?
          herald.t('The newest {n} matching this view are selected.', {n: n}) :
          herald.t('All {n} matching this view are selected.', {n: n}));
        return button.prop('hidden', true);
      }
      var show = Boolean(counted && (counted.count > selected || counted.more));
      button.prop('hidden', !show).text(!show ? '' : counted.more ?
        herald.t('Select the newest {n} matching this view', {n: n}) :
        herald.t('Select all {n} matching this view', {n: n}));
    },

    choose: function () {
      if (!this.counted) return;
      this.active = this.counted;
      this.render();
      this.bar.$('.bulk-read').trigger('focus');  // the button pressed is gone
    },

    // Run `action` ('read', 'snooze' until `until` (ms), or 'archive': 'unarchive' in
    // the Archived view) on every notification matching the view; false when nothing
    // matching is chosen.
    run: function (action, until) {
      if (!this.active) return false;
      var self = this, feed = this.feed, collection = feed.collection, query = this.active.query;
      if (action === 'archive' && collection.criteria.view === 'archived') action = 'unarchive';
      var refused = herald.unsaved && herald.unsaved();
      var body = action === 'snooze' ? {action: action, until: until} : {action: action};
      var sent = refused ? Promise.reject(refused) : herald.client.send(PATH + '?' + query, body);
      sent.then(function (done) {
        self.reset();
        feed.actions.clearSelection();
        collection.load(collection.criteria);  // what is left of the view, from its newest
        var count = {count: herald.countWords(done.count)};
        var words = action === 'read' ? herald.t('Marked read: {count}', count) :
          action === 'snooze' ? herald.t('Snoozed until {time}: {count}', _.extend({time: herald.exactTime(new Date(until))}, count)) :
          action === 'archive' ? herald.t('Archived: {count}', count) : herald.t('Moved to the inbox: {count}', count);
        feed.trigger('did', words, done.undo && function () {
          return herald.client.send(PATH + '/undo', {undo: done.undo}).then(function () {
            return collection.load(collection.criteria);
          });
        });
      }, function (error) {
        self.bar.$('.bulk-count').text(herald.t('Not done: {why}', {why: herald.errorText(error)}));
      });
      return true;
    }
  });
})(window.herald = window.herald || {});
