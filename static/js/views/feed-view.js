/*
 * The feed: newest first, one row per group (feed-item.js: a run by its
 * `correlation_id`, else the same topic and title), in three tabs:
 * "Inbox" (everything but machine chatter), "For you" (private to the user)
 * and "Activity" (low-severity steps of runs: herald.isActivity). In the
 * inbox, critical unread rows are pinned on top.
 *
 * One Tab stop for the whole list (a roving tabindex): the current row's
 * controls are in the Tab order, the others are not; j/k and the arrows move
 * (feed-keys.js; the current row's methods are in feed-current.js). Two
 * collaborators hold their own state: `actions`
 * (feed-actions.js: selection, actions, keeping the focus across draws) and
 * `seen` (feed-seen.js: the `seen` watermark). The keys and the bulk bar
 * (bulk-bar.js) call `feed.actions` themselves.
 *
 * The current row is said (`current`) when the user moves it (j/k, the focus)
 * or when it leaves and the next takes its place, so the open detail follows
 * it (detail-follow.js); while the detail is open (`following`) the current
 * row stays where the user put it rather than going back to the top.
 *
 * A live notification, a read change or the oldest let go touch only their
 * own row; anything else draws the list again whole (once per frame at most),
 * keeping the focus on the same control of the same row. Only the top of the
 * list is drawn, down to a little past where the user is (feed-window.js).
 */
(function (herald) {
  'use strict';

  var TABS = ['inbox', 'foryou', 'activity'];
  herald.FEED_TABS = TABS;

  // A row event, handled by the feed's actions (feed-actions.js).
  function act(name) {
    return function () { return this.actions[name].apply(this.actions, arguments); };
  }

  herald.FeedView = Backbone.View.extend({
    events: {
      'click li.notification': act('clickItem'),
      'focusin li.notification': 'focusItem',
      'click .select': act('clickSelect'),
      'click .toggle-read': act('toggleRead'),
      'click .archive': act('archive'),
      'click .unarchive': act('unarchive'),
      'click .unsnooze': act('unsnooze'),
      'click .mute': act('mute'),
      'click .retry': act('retryRow'),
      'click .snooze-later': act('openSnoozeOf'),
      'click .snooze-for': act('snoozeFor'),
      'click .snooze-custom': act('snoozeCustom')
    },

    initialize: function (options) {
      this.empty = options.empty;
      this.tab = 'inbox';
      this.groups = {};    // the id a row shows (its newest) -> the models it stands for
      this.byKey = {};     // group key -> the same models
      this.current = null; // the key of the current row (the list's one Tab stop)
      this.rows = new Map();  // group key -> its row as last drawn (itemByKey, feed-current.js)
      this.following = false;  // the detail is open and follows the current row
      this.actions = new herald.FeedActions(this);  // selection, actions, focus keeping (feed-actions.js)
      this.scheduleRender = _.bind(function () {
        if (this.pending) return;
        this.pending = true;
        window.requestAnimationFrame(_.bind(function () { this.pending = false; this.render(); }, this));
      }, this);
      herald.fillSnoozeMenusOpening(this.el);
      this.liftOpenMenus();
      this.listenTo(this.collection, 'add', this.addOne);
      this.listenTo(this.collection, 'change:read', this.showRead);
      this.listenTo(this.collection, 'remove', this.removeOne);
      this.listenTo(this.collection, 'reset', function () { this.resetWindow(); this.scheduleRender(); });
      this.watchWindow();  // only the top of the list is drawn (feed-window.js)
      this.seen = new herald.FeedSeen(this);  // the `seen` watermark (feed-seen.js)
      this.timer = setInterval(_.bind(this.refreshTimes, this), 1000);
    },

    key: function (model) {
      return model.rowKey();
    },

    showTab: function (tab) {
      this.tab = _.contains(TABS, tab) ? tab : 'inbox';
      this.actions.forgetSelection();
      this.resetWindow();
      this.render();
      this.trigger('selection', this.actions.selection());
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

    // The row of `group` (null: not in this tab); `d`, when known: herald.describeGroup's.
    draw: function (group, d) {
      var key = this.key(group[0]);
      d = d || herald.describeGroup(group, this.collection);
      if (!this.inTab(d, this.tab)) return null;
      var item = herald.drawFeedItem(group, key, d, {
        view: this.collection.criteria.view, selected: this.actions.isSelected(key), pinned: this.pinned(d),
        until: this.collection.criteria.view === 'snoozed' && this.collection.snoozed[group[0].id]
      });
      var failure = this.actions.failureOf(key);
      if (failure) item.querySelector('.main').appendChild(herald.failureNote(failure));
      if (key === this.current) this.roving(item, true);
      this.rows.set(key, item);
      return item;
    },

    render: function () {
      if (this.pending) return this;  // a whole draw is on its way
      var focus = this.actions.focused(), self = this;
      var menu = this.$('details.snooze[open]').closest('li.notification').attr('data-key');
      var at = this.$('li.notification').index(this.itemByKey(this.current));  // where the current row was
      self.groups = {};
      self.rows = new Map();
      var all = self.ordered(), limit = self.windowFor(all, Boolean(focus) || self.following);
      var items = _.map(all.slice(0, limit), function (row) {
        self.groups[row.group[0].id] = row.group;
        return self.draw(row.group, row.d);
      });
      self.setMore(all.length > limit);
      self.$el.empty().append(items);
      self.checkEnd();
      if (!self.itemByKey(self.current).length && at >= 0 && (focus || self.following)) {
        // The current row left (archived, snoozed, muted): the one now in its place.
        var items = self.$('li.notification');
        self.moveTo(items.length ? items.eq(Math.min(at, items.length - 1)).attr('data-key') : null, false);
      } else if (!self.itemByKey(self.current).length || !(focus || self.following)) {
        self.setCurrent(self.firstKey(), false);
      }
      if (menu) herald.reopenSnoozeMenu(self.itemByKey(menu)[0]);
      self.showEmpty();
      if (focus) self.actions.refocus(focus);
      self.seen.later();
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
      this.seen.later();  // soon, not in the same task: it reads the layout
    },

    // Draw `group` again in place of `old` (a jQuery row, maybe none), where it goes.
    replace: function (old, group) {
      var key = this.key(group[0]);
      var focus = old.length ? this.actions.focused() : null;
      var menu = old.find('details.snooze').prop('open');
      var d = herald.describeGroup(group, this.collection), inTab = this.inTab(d, this.tab);
      old.remove();
      var before = inTab && this.itemAfter(group[0].id, this.pinned(d));
      var item = inTab && this.inWindow(before) ? this.draw(group, d) : null;  // not drawn to be dropped
      if (item) {
        this.groups[group[0].id] = group;
        this.el.insertBefore(item, before);
      } else {
        // Out of the tab, or past the drawn rows: drawn when reached, or now if the user is on it.
        this.rows.delete(key);
        if (inTab && (focus || (key === this.current && this.following))) item = this.drawUpTo(key);
        if (!item) this.checkEnd();  // the list got shorter: the marker may be near now
      }
      if (item) {
        if (menu) herald.reopenSnoozeMenu(item);
        if (focus) this.actions.refocus(_.extend(focus, {key: key}));
        this.fitWindow();
      }
      // The list's Tab stop: the top row, unless the user is working in the list.
      if (!this.itemByKey(this.current).length ||
          !(this.following || $.contains(this.el, document.activeElement))) {
        this.setCurrent(this.firstKey(), false);
      }
      this.showEmpty();
      this.trigger('changed');
    },

    // The row a row for `id` goes before (null: the end): pinned rows first, then
    // the rest, each newest first. Usually the first; else found by bisection.
    itemAfter: function (id, pinned) {
      var first = this.el.querySelector(pinned ? 'li.notification.pinned' : 'li.notification:not(.pinned)');
      if (first && herald.compareIds(first.getAttribute('data-id'), id) < 0) return first;  // the usual case
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
      if (group && !old.length && key !== this.current) {  // a row not drawn: only the group shrinks
        var left = _.without(group, model);
        if (left.length) this.byKey[key] = left; else delete this.byKey[key];
        return;
      }
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
        this.rows.delete(key);
        old.remove();
        this.checkEnd();  // the list got shorter: the marker may be near now
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

    // Relative times, kept current: each second, only the rows' times past their `dueAt`
    // (feed-item.js), whose words changed, not every row (that took tens of ms a second).
    refreshTimes: function () {
      var now = Date.now(), groups = this.groups, times = this.el.querySelectorAll('li.notification > time.when');
      for (var i = 0; i < times.length; i++) {
        if (times[i].dueAt > now) continue;
        var group = groups[times[i].parentNode.getAttribute('data-id')];
        if (group) herald.drawRowTime(times[i], group[0], now);
      }
    },

    // The row whose snooze menu is open is lifted over the rows below it, which its menu
    // hangs over (herald.css, .menu-open). An observer, not a :has() in the CSS: that had
    // every change inside any row (its time, each second) restyle the row.
    liftOpenMenus: function () {
      this.menus = new MutationObserver(function (records) {
        _.each(records, function (record) {
          var item = $(record.target).closest('li.notification')[0];
          if (item) item.classList.toggle('menu-open', Boolean(item.querySelector('details.snooze[open]')));
        });
      });
      this.menus.observe(this.el, {attributes: true, attributeFilter: ['open'], subtree: true});
    },

    remove: function () {
      this.menus.disconnect();
      this.stopWatchingWindow();
      clearInterval(this.timer);
      this.seen.stop();
      return Backbone.View.prototype.remove.apply(this, arguments);
    }
  });

})(window.herald = window.herald || {});
