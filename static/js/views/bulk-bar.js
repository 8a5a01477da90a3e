/*
 * The bar over the feed: the tabs with their unread counts, "Mark all read"
 * (with an Undo), the density switch, and, while rows are selected, what a
 * selection can have done to it in one request each: read, unread, archive,
 * snooze; "Select all" takes every row of the tab, loading the older pages of
 * the view first (up to MAX_PAGES more).
 */
(function (herald) {
  'use strict';

  var LABELS = {inbox: herald.t('Inbox'), foryou: herald.t('For you'), activity: herald.t('Activity')};
  var MAX_PAGES = 10;

  herald.BulkBar = Backbone.View.extend({
    events: {
      'click .tab': 'clickTab',
      'keydown .tabs': 'arrowTabs',
      'click .bulk-read': function () { this.feed.actions.setRead(true); },
      'click .bulk-unread': function () { this.feed.actions.setRead(false); },
      'click .bulk-archive': function () { this.feed.actions.archiveModels(null, this.feed.collection.criteria.view !== 'archived'); },
      'click .bulk-snooze .snooze-for': 'snoozeSelection',
      'click .select-all': 'selectAll',
      'click .select-none': function () { this.feed.actions.clearSelection(); },
      'click .mark-all-read': 'markAllRead',
      'click .density': 'toggleDensity'
    },

    initialize: function (options) {
      this.feed = options.feed;
      this.recount = _.throttle(_.bind(this.showCounts, this), 250, {leading: false});
      this.listenTo(this.feed, 'selection', this.showSelection);
      this.listenTo(this.feed, 'rendered changed', this.recount);
      this.listenTo(this.feed.collection, 'change:read reset add remove', this.recount);
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
          '<button type="button" class="density" aria-pressed="false">' + herald.t('Comfortable') + '</button>' +
          '<button type="button" class="shortcuts" aria-haspopup="dialog">' + herald.t('Shortcuts') + ' <kbd>?</kbd></button>' +
        '</div>' +
        '<div class="bulk" role="toolbar" aria-label="' + _.escape(herald.t('Selected notifications')) + '" hidden>' +
          '<span class="bulk-count" aria-live="polite"></span>' +
          '<button type="button" class="bulk-read">' + herald.t('Mark read') + '</button>' +
          '<button type="button" class="bulk-unread">' + herald.t('Mark unread') + '</button>' +
          '<button type="button" class="bulk-archive">' + herald.t('Archive') + '</button>' +
          herald.snoozeMenu().replace('class="snooze"', 'class="snooze bulk-snooze"') +
          '<button type="button" class="select-none">' + herald.t('Clear') + '</button>' +
        '</div>');
      this.$('.density').attr('aria-pressed', String(this.current === 'comfortable'));
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

    showCounts: function () {
      var counts = this.feed.actions.counts(), loaded = this.feed.collection.loaded !== false;
      this.$('.tab').each(function () {
        var tab = this.getAttribute('data-tab'), n = counts[tab];
        $(this).find('.tab-count').text(loaded && n ? String(n) : '')
          .attr('aria-label', loaded && n ? herald.t('{n} unread', {n: n}) : null);
      });
      this.$('.mark-all-read').prop('disabled', !loaded || !counts[this.feed.tab]);
    },

    showSelection: function (keys) {
      var bar = this.$('.bulk');
      bar.prop('hidden', !keys.length);
      var models = this.feed.actions.targets();
      this.$('.bulk-count').text(keys.length ? herald.t('{n} selected ({count})', {n: keys.length,
        count: herald.countWords(models.length)}) : '');
      this.$('.bulk-archive').text(this.feed.collection.criteria.view === 'archived' ? herald.t('Move to inbox') :
        herald.t('Archive'));
    },

    snoozeSelection: function (event) {
      event.stopPropagation();
      this.feed.actions.snoozeModels(this.feed.actions.targets(), Number($(event.currentTarget).attr('data-until')));
      this.$('.bulk-snooze').prop('open', false);
    },

    // Every row of the tab, the older pages of the view loaded first.
    selectAll: function () {
      var feed = this.feed, collection = feed.collection, pages = 0, button = this.$('.select-all');
      button.prop('disabled', true).text(herald.t('Loading…'));
      function more() {
        if (!collection.nextBefore || pages >= MAX_PAGES) return Promise.resolve();
        pages += 1;
        return collection.loadMore().then(more);
      }
      more().then(function () {
        feed.render();
        feed.actions.selectAllShown();
      }, function () { feed.actions.selectAllShown(); }).then(function () {
        button.prop('disabled', false).text(herald.t('Select all'));
      });
    },

    // Every unread row of the tab, with an Undo.
    markAllRead: function () {
      var feed = this.feed, models = [];
      feed.$('li.notification').each(function () {
        models = models.concat(feed.byKey[this.getAttribute('data-key')] || []);
      });
      feed.actions.setRead(true, models);
    },

    density: function (which) {
      this.current = which;
      $('body').toggleClass('density-comfortable', which === 'comfortable');
      this.$('.density').attr('aria-pressed', String(which === 'comfortable'));
    },

    toggleDensity: function () {
      this.density(this.current === 'comfortable' ? 'compact' : 'comfortable');
      try { window.localStorage.setItem('herald.density', this.current); } catch (e) { /* private mode */ }
    }
  });
})(window.herald = window.herald || {});
