/*
 * Where a card was, once someone else deleted it while this user was in it.
 *
 * A card deleted under a user who was typing its new title would take her
 * text with it, and leave the focus on <body>. Instead, the card's place in
 * its column holds this notice: it says the card was deleted, keeps her text
 * (in a field she can still change) and offers to recreate the card with it,
 * to copy it, or to dismiss the notice; the focus goes to its first action,
 * which a screen reader says with the notice's text. A user who was only on
 * the card (a select focused, nothing typed) gets the sentence and Dismiss.
 * card-view.js puts it in place (CardView.removed).
 */
(function () {
  'use strict';

  var DeletedCardView = Backbone.View.extend({
    tagName: 'li',
    className: 'card-deleted',

    events: {
      'click .recreate': 'recreate',
      'click .copy': 'copy',
      'click .dismiss': 'dismiss'
    },

    // options.cardId, options.title: the card that was deleted; options.text: what
    // she had typed (null: nothing); options.collection: the board's cards.
    initialize: function (options) {
      this.cardId = options.cardId;
      this.title = options.title;
      this.text = options.text;
    },

    render: function () {
      var base = 'deleted-' + this.cid, kept = this.text != null;
      var say = $('<p class="deleted-text">').attr('id', base + '-text')
        .append($('<strong>').text('“' + this.title + '” was deleted'))
        .append(document.createTextNode(kept ?
          ' while you were editing it. Your text is kept here.' : ' while you were on it.'));
      var choices = $('<div class="choices">');
      if (kept) {
        choices.append($('<button type="button" class="recreate">Recreate the card</button>'))
          .append($('<button type="button" class="copy">Copy the text</button>'));
      }
      choices.append($('<button type="button" class="dismiss">Dismiss</button>'));
      choices.children().attr('aria-describedby', base + '-text');
      // (A group inside the list item: a list's items keep their role.)
      var group = $('<div role="group">').attr('aria-labelledby', base + '-text').append(say);
      if (kept) {
        group.append($('<label>').attr('for', base + '-kept').text('Your text'))
          .append($('<textarea rows="2" maxlength="200">').attr('id', base + '-kept').val(this.text));
      }
      group.append(choices).append('<p class="deleted-status" role="status"></p>');
      this.$el.attr('data-id', this.cardId).empty().append(group);
      return this;
    },

    // The focus on the first action: Recreate when there is text, else Dismiss.
    focus: function () {
      this.$('.choices button').first().focus();
      return this;
    },

    kept: function () {
      return this.$('textarea').val();
    },

    status: function (text) {
      this.$('.deleted-status').text(text);
    },

    // A new card with her text, in place of this notice; the focus on its Edit button.
    recreate: function () {
      var view = this, title = $.trim(this.kept());
      if (!title) return this.status('Type a title first.');
      this.collection.create({title: title}, {
        wait: true,
        success: function (card) {
          view.remove();
          $('.card-item[data-id="' + card.id + '"] .edit').focus();
        },
        error: function (card, xhr) {
          view.status((xhr.responseJSON && xhr.responseJSON.error) || 'Could not add the card.');
        }
      });
    },

    // To the clipboard; where the page may not write it, her text is selected to copy by hand.
    copy: function () {
      var view = this, text = this.kept(), field = this.$('textarea');
      function byHand() {
        field.trigger('focus').trigger('select');
        view.status('Selected: press Ctrl+C (⌘C) to copy it.');
      }
      if (!navigator.clipboard || !navigator.clipboard.writeText) return byHand();
      navigator.clipboard.writeText(text).then(function () { view.status('Copied.'); }, byHand);
    },

    // Gone; the focus to the next card in the column (or the one before), else to "New card".
    dismiss: function () {
      var next = this.$el.next('.card-item'), near = next.length ? next : this.$el.prev('.card-item');
      var target = near.length ? near.find('.edit') : $('#new-title');
      this.remove();
      target.trigger('focus');
    }
  });

  window.board = _.extend(window.board || {}, {DeletedCardView: DeletedCardView});
})();
