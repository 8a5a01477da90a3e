/*
 * The board page: cards in columns, edited by everyone at once, kept live by Herald.
 *
 * The Herald part is three lines at the bottom: connect with what the page
 * carries (`{{ herald_scripts() }}`), sync the cards collection with the
 * `board.card.*` notifications, and listen for this user's own alerts. The
 * views know nothing of Herald: they listen to the collection, which
 * Herald.sync keeps up to date (add, update, remove) as other users edit.
 */
(function () {
  'use strict';

  var config = JSON.parse(document.getElementById('board-config').textContent);
  var COLUMN_NAMES = {todo: 'To do', doing: 'Doing', done: 'Done'};
  var e = _.escape;

  var Card = Backbone.Model.extend({defaults: {column: 'todo', assignee: null}});
  var Cards = Backbone.Collection.extend({model: Card, url: '/api/cards', comparator: 'id'});

  function options(values, selected, labels) {
    return _.map(values, function (value) {
      return '<option value="' + e(value) + '"' + (value === selected ? ' selected' : '') + '>' +
        e(labels ? labels[value] : value) + '</option>';
    }).join('');
  }

  // One card: its title (editable), column and assignee, and a delete button.
  var CardView = Backbone.View.extend({
    tagName: 'li',
    className: 'card-item',

    events: {
      'click .edit': 'edit',
      'submit .edit-form': 'save',
      'click .cancel': 'render',
      'change .move': 'move',
      'change .assign': 'assign',
      'click .delete': 'destroy'
    },

    initialize: function () {
      this.listenTo(this.model, 'change', this.render);
      this.listenTo(this.model, 'remove', this.remove);
    },

    render: function () {
      var card = this.model.toJSON(), id = e(card.id);
      this.$el.attr({'data-id': card.id, 'data-version': card.version}).html(
        '<p class="title">' + e(card.title) + '</p>' +
        '<p class="meta">v' + e(card.version) + ' · ' + e(card.updated_by || '') + ' · ' +
          '<time datetime="' + e(new Date(card.updated_at * 1000).toISOString()) + '">' +
          e(new Date(card.updated_at * 1000).toLocaleTimeString([], {hour: '2-digit', minute: '2-digit'})) +
          '</time></p>' +
        '<div class="controls">' +
          '<button type="button" class="edit" aria-label="Edit ' + e(card.title) + '">Edit</button>' +
          '<label class="sr-only" for="move-' + id + '">Column</label>' +
          '<select class="move" id="move-' + id + '">' +
            options(config.columns, card.column, COLUMN_NAMES) + '</select>' +
          '<label class="sr-only" for="assign-' + id + '">Assignee</label>' +
          '<select class="assign" id="assign-' + id + '"><option value="">nobody</option>' +
            options(config.users, card.assignee) + '</select>' +
          '<button type="button" class="delete" aria-label="Delete ' + e(card.title) + '">Delete</button>' +
        '</div>');
      return this;
    },

    edit: function () {
      var id = e(this.model.id);
      this.$('.title').replaceWith(
        '<form class="edit-form"><label class="sr-only" for="title-' + id + '">Title</label>' +
        '<input id="title-' + id + '" name="title" maxlength="200" required value="' +
        e(this.model.get('title')) + '"><button type="submit">Save</button>' +
        '<button type="button" class="cancel">Cancel</button></form>');
      this.$('input[name=title]').focus();
    },

    save: function (event) {
      event.preventDefault();
      this.model.save({title: this.$('input[name=title]').val()}, {patch: true, wait: true});
    },

    move: function () {
      this.model.save({column: this.$('.move').val()}, {patch: true, wait: true});
    },

    assign: function () {
      this.model.save({assignee: this.$('.assign').val() || null}, {patch: true, wait: true});
    },

    destroy: function () {
      this.model.destroy({wait: true});
    }
  });

  // The columns: each card in its column's list, in id order; moved when its column changes.
  var BoardView = Backbone.View.extend({
    initialize: function () {
      this.views = {};
      this.listenTo(this.collection, 'add', this.place);
      this.listenTo(this.collection, 'change:column', this.place);
      this.listenTo(this.collection, 'remove', function (card) { delete this.views[card.cid]; });
    },

    place: function (card) {
      var view = this.views[card.cid];
      if (!view) view = this.views[card.cid] = new CardView({model: card}).render();
      var list = this.$('[data-column="' + card.get('column') + '"] .cards');
      var next = list.children().filter(function () {
        return Number(this.getAttribute('data-id')) > card.id;
      }).first();
      if (next.length) view.$el.insertBefore(next); else list.append(view.el);
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

  // What everyone did, as Herald told it: one line per notification, newest first.
  var ActivityView = Backbone.View.extend({
    initialize: function (options) {
      this.listenTo(options.herald, 'notification', this.add);
    },

    add: function (n) {
      if (n.topic.indexOf('board.card.') !== 0) return;
      $('<li>').attr('data-id', n.id)
        .append($('<time>').attr('datetime', n.ts).text(new Date(n.ts).toLocaleTimeString()))
        .append(document.createTextNode(' ' + n.title))
        .prependTo(this.$el);
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

  var cards = new Cards();
  var herald = Herald.connect(Herald.pageOptions());            // Herald: connect
  Herald.sync(cards, 'board.card', {fetch: true});              // Herald: keep cards live

  window.board = {cards: cards, herald: herald};
  new BoardView({el: '.columns', collection: cards});
  new NewCardView({el: '#new-card', collection: cards});
  new ActivityView({el: '#activity', herald: herald});
  new AlertsView({el: '#alerts', herald: herald});
  new LiveView({el: '#live', herald: herald});
})();
