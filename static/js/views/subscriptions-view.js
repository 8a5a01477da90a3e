/*
 * The subscriptions panel: add a topic prefix, remove one, see errors.
 *
 * The box suggests the topics of the recent history (the collection's
 * `known`, from GET /api/topics) with how many notifications each has: an
 * ARIA combobox whose list opens as the user types (or on Down), moved
 * through with Up/Down, chosen with Enter or a click (which subscribes at
 * once), closed with Escape. With no subscriptions yet, the most common
 * names are offered as one-click buttons ("Popular here").
 */
(function (herald) {
  'use strict';

  var SHOWN = 8;     // suggestions listed at most
  var POPULAR = 5;   // popular names offered to a user with no subscriptions

  // `text` escaped, with its first occurrence of `part` (any case) in <mark>.
  function marked(text, part) {
    var at = part ? text.toLowerCase().indexOf(part) : -1;
    if (at < 0) return _.escape(text);
    return _.escape(text.slice(0, at)) + '<mark>' + _.escape(text.slice(at, at + part.length)) +
      '</mark>' + _.escape(text.slice(at + part.length));
  }

  herald.SubscriptionsView = Backbone.View.extend({
    itemTemplate: function (topic) {
      var id = _.escape(topic.id);
      return '<li data-topic="' + id + '"><code>' + id + '</code> ' +
        '<button type="button" class="unsubscribe" aria-label="' +
        _.escape(herald.t('Unsubscribe from {topic}', {topic: topic.id})) + '">' + _.escape(herald.t('Unsubscribe')) + '</button></li>';
    },

    optionTemplate: function (choice, index, typed, covered) {
      return '<li role="option" id="' + this.cid + '-option-' + index + '" aria-selected="false"' +
        ' data-topic="' + _.escape(choice.name) + '">' +
        '<span class="suggestion-name">' + marked(choice.name, typed) + '</span>' +
        (choice.prefix ? '<span class="suggestion-tag">' + _.escape(herald.t('prefix')) + '</span>' : '') +
        (covered ? '<span class="suggestion-tag">' + _.escape(herald.t('subscribed')) + '</span>' : '') +
        '<span class="suggestion-count">' + choice.count +
        '<span class="sr-only"> ' + _.escape(herald.tn('notification', 'notifications', choice.count)) +
        '</span></span></li>';
    },

    events: {
      'submit .subscribe-form': 'subscribe',
      'click .unsubscribe': 'unsubscribe',
      'input input[name=topic]': 'suggest',
      'keydown input[name=topic]': 'onKey',
      'focus input[name=topic]': 'loadKnown',
      'blur input[name=topic]': 'close',
      'mousedown .topic-suggestions [role=option]': 'keepFocus',
      'click .topic-suggestions [role=option]': 'pick',
      'click .popular button': 'pick'
    },

    initialize: function () {
      var listId = this.cid + '-suggestions';
      this.input = this.$('input[name=topic]').attr({
        role: 'combobox', 'aria-autocomplete': 'list', 'aria-expanded': 'false',
        'aria-controls': listId, autocomplete: 'off', spellcheck: 'false'
      });
      this.list = $('<ul class="topic-suggestions" role="listbox" hidden></ul>')
        .attr({id: listId, 'aria-label': herald.t('Known topics')});
      this.input.after(this.list);
      this.popular = $('<div class="popular" role="group" hidden></div>')
        .attr('aria-label', herald.t('Popular topics: subscribe with one click'));
      this.$('.topics').before(this.popular);
      this.status = $('<p class="sr-only" role="status"></p>').appendTo(this.$el);
      this.choices = [];   // what the open list shows
      this.active = -1;    // the index of the highlighted option; -1: none
      this.listenTo(this.collection, 'update reset sort', this.render);
      this.listenTo(this.collection, 'known', this.refresh);
      this.listenTo(herald.dispatcher, 'subscriptions:error', this.showError);
      this.listenTo(herald.dispatcher, 'subscriptions', this.clearError);
      this.listenTo(herald.dispatcher, 'recovered', this.clearError);
      this.render();
      // The page connects its client right after building its views.
      _.defer(_.bind(this.loadKnown, this));
    },

    render: function () {
      var html = this.collection.map(function (model) {
        return this.itemTemplate(model.toJSON());
      }, this).join('');
      this.$('.topics').html(html);
      this.renderPopular();
      return this;
    },

    // With no subscriptions: the most common names at the top of the tree.
    renderPopular: function () {
      var top = _.filter(this.collection.choices(), function (c) {
        return c.name.indexOf('.') < 0;
      }).slice(0, POPULAR);
      var show = this.collection.length === 0 && top.length > 0;
      this.popular.prop('hidden', !show);
      if (!show) return this.popular.empty();
      this.popular.html('<span class="popular-label">' + _.escape(herald.t('Popular here:')) + '</span> ' + _.map(top, function (c) {
        return '<button type="button" class="suggest" data-topic="' + _.escape(c.name) + '">' +
          _.escape(c.name) + ' <span class="suggestion-count">(' + c.count + ')</span></button>';
      }).join(' '));
    },

    loadKnown: function () {
      this.collection.loadKnown();
    },

    // New topics came: the popular names, and the open list, show them.
    refresh: function () {
      this.renderPopular();
      if (this.isOpen() || (this.input.is(':focus') && this.input.val())) this.suggest();
    },

    isOpen: function () {
      return !this.list.prop('hidden');
    },

    // List the known names matching what is typed: those starting with it first,
    // then those with a segment starting with it, then any containing it; the
    // most frequent first within each.
    suggest: function (options) {
      var typed = $.trim(this.input.val()).toLowerCase();
      if (!typed && !(options && options.all)) return this.close();
      var ranked = [];
      _.each(this.collection.choices(), function (choice) {
        var at = choice.name.indexOf(typed);
        if (at < 0) return;
        var rank = at === 0 ? 0 : choice.name.charAt(at - 1) === '.' ? 1 : 2;
        ranked.push({choice: choice, rank: rank});
      });
      ranked = _.sortBy(ranked, 'rank').slice(0, SHOWN);  // stable: counts stay in order
      this.choices = _.pluck(ranked, 'choice');
      if (!this.choices.length) return this.close();
      var covers = _.bind(this.collection.covers, this.collection);
      this.list.html(_.map(this.choices, function (choice, index) {
        return this.optionTemplate(choice, index, typed, covers(choice.name));
      }, this).join(''));
      this.list.prop('hidden', false);
      this.input.attr('aria-expanded', 'true');
      this.highlight(-1);
      this.status.text(herald.tn('{n} suggestion: use Up and Down to choose',
        '{n} suggestions: use Up and Down to choose', this.choices.length));
    },

    close: function () {
      if (!this.isOpen()) return;
      this.list.prop('hidden', true).empty();
      this.input.attr('aria-expanded', 'false').removeAttr('aria-activedescendant');
      this.choices = [];
      this.active = -1;
      this.status.text('');
    },

    highlight: function (index) {
      this.active = index;
      var options = this.list.children();
      options.attr('aria-selected', 'false');
      if (index < 0) return this.input.removeAttr('aria-activedescendant');
      var option = options.eq(index).attr('aria-selected', 'true');
      this.input.attr('aria-activedescendant', option.attr('id'));
      option[0].scrollIntoView({block: 'nearest'});
    },

    onKey: function (event) {
      var key = event.key;
      if (key === 'ArrowDown' || key === 'ArrowUp') {
        event.preventDefault();
        if (!this.isOpen()) return this.suggest({all: true});
        var count = this.choices.length;
        var step = key === 'ArrowDown' ? 1 : -1;
        // From none, Down goes to the first and Up to the last; past either end, around.
        this.highlight(this.active < 0 ? (step > 0 ? 0 : count - 1) : (this.active + step + count) % count);
      } else if (key === 'Enter' && this.isOpen() && this.active >= 0) {
        event.preventDefault();
        this.choose(this.choices[this.active].name);
      } else if (key === 'Escape' && this.isOpen()) {
        event.preventDefault();
        event.stopPropagation();  // Escape closes the list, nothing else
        this.close();
      } else if (key === 'Tab') {
        this.close();
      }
    },

    // A click on an option must not take the focus from the box first.
    keepFocus: function (event) {
      event.preventDefault();
    },

    pick: function (event) {
      this.choose($(event.currentTarget).attr('data-topic'));
    },

    choose: function (topic) {
      this.close();
      this.add(topic);
      this.input.trigger('focus');
    },

    subscribe: function (event) {
      event.preventDefault();
      var topic = $.trim(this.input.val());
      if (!topic) return;
      this.close();
      this.add(topic);
    },

    // Subscribe to `topic`. The box keeps what was typed until it is done: refused
    // (Redis known away: at once, herald.unsaved) or failed, the text stays for one
    // Enter to send it again, and the error goes by itself when Herald is back.
    add: function (topic) {
      var self = this, status = this.status, typed = this.input.val();
      var refused = herald.unsaved && herald.unsaved();
      if (refused) return this.showError(herald.t('Not subscribed to {topic}: {why}', {topic: topic, why: herald.errorText(refused)}));
      this.collection.subscribe(topic).then(function (added) {
        // Done: the box empties, unless more was typed meanwhile (what was typed may be
        // a prefix of the suggestion picked: "sp" for spark.job).
        if (self.input.val() === typed) self.input.val('');
        if (added.length) status.text(herald.t('Subscribed to {topic}', {topic: topic}));
      }, function (error) {
        self.showError(herald.t('Not subscribed to {topic}: {why}', {topic: topic, why: herald.errorText(error)}));
      });
    },

    unsubscribe: function (event) {
      var refused = herald.unsaved && herald.unsaved();
      if (refused) return this.showError(herald.errorText(refused));
      this.collection.unsubscribe($(event.currentTarget).closest('li').attr('data-topic'));
    },

    showError: function (message) {
      this.$('.error').text(message).prop('hidden', false);
    },

    clearError: function () {
      this.$('.error').text('').prop('hidden', true);
    }
  });
})(window.herald = window.herald || {});
