/*
 * The board page: cards in columns, edited by everyone at once, kept live by Herald.
 *
 * The Herald part is three lines at the bottom: connect with what the page
 * carries (`{{ herald_scripts() }}`), sync the cards collection with the
 * `board.card.*` data events, and listen for this user's own alerts. The
 * page comes with its cards and Herald's cursor (the id of the newest event
 * the host app had shipped before it read them): once subscribed,
 * Herald.sync reads what was published after that cursor, so a change made
 * between the page's render and its subscription is not lost, and no
 * second load of the cards is needed. The views know nothing of Herald:
 * they listen to the collection, which Herald.sync keeps up to date (add,
 * update, remove) as other users edit.
 * Each card is a board.CardView (card-view.js), which never overwrites a
 * field its user is editing: it offers the other user's change instead.
 */
(function () {
  'use strict';

  var config = JSON.parse(document.getElementById('board-config').textContent);

  var Card = Backbone.Model.extend({defaults: {column: 'todo', assignee: null}});
  var Cards = Backbone.Collection.extend({model: Card, url: '/api/cards', comparator: 'id'});

  // The columns: each card in its column's list, in id order; moved when the
  // column it shows changes (the card view says when: see card-view.js). A
  // card moved while something in it has the focus keeps it, caret and all.
  var BoardView = Backbone.View.extend({
    initialize: function () {
      this.views = {};
      this.listenTo(this.collection, 'add', this.add);
      this.listenTo(this.collection, 'remove', function (card) { delete this.views[card.cid]; });
      this.collection.each(this.add, this);  // the cards the page came with
    },

    add: function (card) {
      var view = this.views[card.cid] = new board.CardView(
        {model: card, config: config, collection: this.collection}).render();
      this.listenTo(view, 'column', this.place);
      this.place(view);
    },

    place: function (view) {
      var id = view.model.id, active = document.activeElement;
      var focused = view.el !== active && view.el.contains(active) ? active : null;
      var caret = focused && typeof focused.selectionStart === 'number' ?
        [focused.selectionStart, focused.selectionEnd, focused.selectionDirection] : null;
      var list = this.$('[data-column="' + view.shown.column + '"] .cards');
      var next = list.children().filter(function () {
        return Number(this.getAttribute('data-id')) > id;
      }).first();
      if (next.length) view.$el.insertBefore(next); else list.append(view.el);
      if (focused && document.activeElement !== focused) {
        focused.focus();
        if (caret) focused.setSelectionRange(caret[0], caret[1], caret[2]);
      }
    }
  });

  var NewCardView = Backbone.View.extend({
    events: {submit: 'create'},

    // The field is emptied at once, ready for the next card; on an error the
    // text comes back with the reason.
    create: function (event) {
      event.preventDefault();
      var input = this.$('input[name=title]'), error = this.$('.error');
      var title = input.val();
      input.val('');
      this.collection.create({title: title}, {
        wait: true,
        success: function () { error.prop('hidden', true); },
        error: function (model, xhr) {
          if (!input.val()) input.val(title);
          error.text((xhr.responseJSON && xhr.responseJSON.error) || 'Could not add the card.')
            .prop('hidden', false);
        }
      });
    }
  });

  // What everyone did, as Herald told it: one line per card event, newest first, in
  // the words of its title ("bob moved “Write docs” from To do to Doing"): the last
  // 20 from Herald's history once connected (so a reload keeps them), then each live.
  var ActivityView = Backbone.View.extend({
    initialize: function (options) {
      var view = this;
      this.listenTo(options.herald, 'notification', this.add);
      options.herald.once('connected', function () {
        options.herald.history({topic: 'board.card', kind: 'all', limit: 20}).then(function (reply) {
          reply.notifications.forEach(function (n) { view.add(n); });
        }, function () { /* live events still come */ });
      });
    },

    add: function (n) {
      if (n.topic.indexOf('board.card.') !== 0 || this.$('[data-id="' + n.id + '"]').length) return;
      var item = $('<li>').attr('data-id', n.id)
        .append($('<time>').attr('datetime', n.ts).text(new Date(n.ts).toLocaleTimeString()))
        .append(document.createTextNode(' ' + n.title));
      // Newest first, whichever came first: the history read or a live event.
      var older = this.$el.children().filter(function () {
        return Herald.compareIds($(this).attr('data-id'), n.id) < 0;
      }).first();
      if (older.length) item.insertBefore(older); else item.appendTo(this.$el);
      this.$el.children().slice(50).remove();
    }
  });

  // This user's private alerts (a card assigned to them), as dismissable toasts.
  var AlertsView = Backbone.View.extend({
    events: {'click .dismiss': function (event) { $(event.currentTarget).closest('.alert').remove(); }},

    initialize: function (options) {
      this.listenTo(options.herald, 'notification:board.alert', this.show);
    },

    show: function (n) {
      var text = $('<div class="text">').append($('<strong>').text(n.title));
      if (n.body) text.append($('<p>').text(n.body));
      var alert = $('<div class="alert" role="status">').attr('data-id', n.id).append(text)
        .append('<button type="button" class="dismiss" aria-label="Dismiss this alert">×</button>')
        .appendTo(this.$el);
      setTimeout(function () { alert.remove(); }, 15000);
    }
  });

  var LiveView = Backbone.View.extend({
    initialize: function (options) {
      this.listenTo(options.herald, 'connection', function (state) {
        this.$el.attr('data-state', state).text(state === 'connected' ? 'live' : state);
      });
    }
  });

  var cards = new Cards(config.cards);  // as of config.cursor
  var herald = Herald.connect(Herald.pageOptions());            // Herald: connect
  // Herald: keep cards live, from the cursor on (caught up over REST once
  // subscribed). fetch: a null cursor (nothing shipped yet) loads the cards
  // once subscribed instead, and so does a catch-up that fails or a reset.
  Herald.sync(cards, 'board.card', {since: config.cursor, fetch: true});

  _.extend(window.board, {cards: cards, herald: herald});
  new BoardView({el: '.columns', collection: cards});
  new NewCardView({el: '#new-card', collection: cards});
  new ActivityView({el: '#activity', herald: herald});
  new AlertsView({el: '#alerts', herald: herald});
  new LiveView({el: '#live', herald: herald});
})();
