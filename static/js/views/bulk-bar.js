/*
 * The bar over the feed: the tabs with their unread counts, "Mark all read"
 * (with an Undo), the density switch, and, while rows are selected, what a
 * selection can have done to it in one request each: read, unread, archive,
 * snooze; "Select all" takes at once every row of the tab loaded (no older page
 * is loaded, as on GitHub), and the bar then offers every notification matching
 * the view, on the server, when more match (select-matching.js).
 */
(function (herald) {
  'use strict';

  var LABELS = {inbox: herald.t('Inbox'), foryou: herald.t('For you'), activity: herald.t('Activity')};

  herald.BulkBar = Backbone.View.extend({
    events: {
      'click .tab': 'clickTab',
      'keydown .tabs': 'arrowTabs',
      'click .bulk-read': function () { if (!this.matching.run('read')) this.feed.actions.setRead(true); },
      'click .bulk-unread': function () { this.feed.actions.setRead(false); },
      'click .bulk-archive': function () {
        if (!this.matching.run('archive')) this.feed.actions.archiveModels(null, this.feed.collection.criteria.view !== 'archived');
      },
      'click .select-matching': function () { this.matching.choose(); },
      'click .bulk-snooze .snooze-for, .bulk-snooze .snooze-custom': 'snoozeSelection',
      'click .select-all': 'selectAll',
      'click .select-none': function () { this.feed.actions.clearSelection(); },
      'click .mark-all-read': 'markAllRead',
      'click .density': 'toggleDensity'
    },

    initialize: function (options) {
      this.feed = options.feed;
      this.matching = new herald.SelectMatching(this);  // "Select all N matching" (select-matching.js)
      this.recount = _.throttle(_.bind(this.showCounts, this), 250, {leading: false});
      this.listenTo(this.feed, 'selection', this.showSelection);
      this.listenTo(this.feed, 'rendered changed', this.recount);
      this.listenTo(this.feed.collection, 'change:read reset add remove', this.recount);
      this.listenTo(this.feed.collection.unreadTotal(_.bind(this.feed.key, this.feed)), 'change', this.recount);
      herald.fillSnoozeMenusOpening(this.el);
      var density = null;
      try { density = window.localStorage.getItem('herald.density'); } catch (e) { /* private mode */ }
      this.density(density === 'comfortable' ? 'comfortable' : 'compact');
    },

    render: function () {
      var tabs = _.map(herald.FEED_TABS, function (tab) {
        return '<button type="button" role="tab" class="tab" id="tab-' + tab + '" data-tab="' + tab + '"' +
          ' aria-controls="feed">' + _.escape(LABELS[tab]) + ' <span class="tab-count"></span></button>';
      }).join('');
      this.$el.html(
        '<div class="tabs" role="tablist" aria-label="' + _.escape(herald.t('Which notifications')) + '">' + tabs + '</div>' +
        '<div class="bar-tools">' +
          '<button type="button" class="select-all">' + herald.t('Select all') + '</button>' +
          '<button type="button" class="mark-all-read">' + herald.t('Mark all read') + '</button>' +
          '<button type="button" class="density"></button>' +
          '<button type="button" class="shortcuts" aria-haspopup="dialog">' + herald.t('Shortcuts') + ' <kbd>?</kbd></button>' +
        '</div>' +
        '<div class="bulk" role="toolbar" aria-label="' + _.escape(herald.t('Selected notifications')) + '" hidden>' +
          '<span class="bulk-count" aria-live="polite"></span>' +
          '<button type="button" class="select-matching" hidden></button>' +
          '<button type="button" class="bulk-read">' + herald.t('Mark read') + '</button>' +
          '<button type="button" class="bulk-unread">' + herald.t('Mark unread') + '</button>' +
          '<button type="button" class="bulk-archive">' + herald.t('Archive') + '</button>' +
          herald.snoozeMenu().replace('class="snooze"', 'class="snooze bulk-snooze"') +
          '<button type="button" class="select-none">' + herald.t('Clear') + '</button>' +
        '</div>');
      this.density(this.current);
      this.showTab(this.feed.tab);
      return this;
    },

    showTab: function (tab) {
      this.$('.tab').each(function () {
        var on = this.getAttribute('data-tab') === tab;
        this.setAttribute('aria-selected', String(on));
        this.tabIndex = on ? 0 : -1;
      });
      $('#feed').attr('aria-labelledby', 'tab-' + tab);
      this.recount();
    },

    clickTab: function (event) {
      this.trigger('tab', $(event.currentTarget).attr('data-tab'));
    },

    // Left and Right move between the tabs (the tablist pattern).
    arrowTabs: function (event) {
      if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
      var tabs = this.$('.tab'), at = tabs.index(event.target);
      var next = tabs.eq((at + (event.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length);
      next.trigger('focus');
      this.trigger('tab', next.attr('data-tab'));
      event.preventDefault();
    },

    // Each tab's unread rows, by the rule of every counter (read-state.js's
    // unreadCounts, the badge's too), past the loaded pages too (unread-total.js);
    // Activity is not counted as unread: no count.
    showCounts: function () {
      var feed = this.feed, loaded = feed.collection.loaded !== false;
      var unread = feed.collection.unreadTotal().counts();
      this.$('.tab').each(function () {
        var tab = this.getAttribute('data-tab'), n = unread[tab];
        var text = n ? herald.unreadText(n, unread.more[tab]) : '';
        $(this).find('.tab-count').text(loaded ? text : '')
          .attr('aria-label', loaded && n ? herald.t('{n} unread', {n: text}) : null);
      });
      // "Mark all read" takes any unread row of the tab, Activity's steps too.
      this.$('.mark-all-read').prop('disabled', !loaded || !feed.actions.hasUnread(feed.tab));
    },

    showSelection: function (keys) {
      var bar = this.$('.bulk');
      bar.prop('hidden', !keys.length);
      var models = this.feed.actions.targets();
      this.$('.bulk-count').text(keys.length ? herald.t('{n} selected ({count})', {n: keys.length,
        count: herald.countWords(models.length)}) : '');
      this.$('.bulk-archive').text(this.feed.collection.criteria.view === 'archived' ? herald.t('Move to inbox') :
        herald.t('Archive'));
      this.matching.offer(keys);
    },

    snoozeSelection: function (event) {
      event.stopPropagation();
      var chosen = event.currentTarget, until = $(chosen).hasClass('snooze-custom') ?
        herald.snoozeMenuUntil(chosen) : Number($(chosen).attr('data-until'));
      if (!until) return;  // a time not in the future: said in the menu
      if (!this.matching.run('snooze', until)) this.feed.actions.snoozeModels(this.feed.actions.targets(), until);
      this.$('.bulk-snooze').prop('open', false);
    },

    // Every row of the tab loaded, at once; the offer of all matching follows the
    // selection (select-matching.js). A draw on its way (one per animation frame)
    // comes first, else the selection would miss the rows it brings.
    selectAll: function () {
      var feed = this.feed;
      if (feed.pending) return feed.once('rendered', function () { feed.actions.selectAllShown(); });
      feed.actions.selectAllShown();
    },

    // Every unread row of the tab, with an Undo.
    markAllRead: function () {
      var feed = this.feed, models = [];
      _.each(feed.shownKeys(), function (key) {  // drawn or not (feed-window.js)
        models = models.concat(feed.byKey[key] || []);
      });
      feed.actions.setRead(true, models);
    },

    // The button says what a press switches to ("Compact" while comfortable is on).
    density: function (which) {
      this.current = which;
      $('body').toggleClass('density-comfortable', which === 'comfortable');
      this.$('.density').text(which === 'comfortable' ? herald.t('Compact') : herald.t('Comfortable'));
    },

    toggleDensity: function () {
      this.density(this.current === 'comfortable' ? 'compact' : 'comfortable');
      try { window.localStorage.setItem('herald.density', this.current); } catch (e) { /* private mode */ }
    }
  });
})(window.herald = window.herald || {});
