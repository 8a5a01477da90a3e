/*
 * What the last action did, with an Undo: "Archived: 3 notifications  [Undo]".
 * Shown for UNDO_MS in a polite live region (and seen: a bar at the foot of the
 * screen); Undo (the button, or `z`) runs the action's inverse once.
 */
(function (herald) {
  'use strict';

  var UNDO_MS = 8000;

  herald.UndoView = Backbone.View.extend({
    events: {
      'click .undo': 'undo',
      'click .dismiss': 'hide'
    },

    // Say `text` with an Undo that runs `inverse` (a function, maybe returning a promise).
    offer: function (text, inverse) {
      clearTimeout(this.timer);
      this.inverse = inverse;
      this.$el.html('<span class="undo-text"></span> ' +
        (inverse ? '<button type="button" class="undo">' + _.escape(herald.t('Undo')) + '</button>' : '') +
        '<button type="button" class="dismiss" aria-label="' + _.escape(herald.t('Dismiss')) + '">×</button>').prop('hidden', false);
      this.$('.undo-text').text(text);
      this.timer = setTimeout(_.bind(this.hide, this), UNDO_MS);
    },

    undo: function () {
      var inverse = this.inverse;
      if (!inverse) return;
      this.inverse = null;
      var self = this;
      Promise.resolve(inverse()).then(function () {
        self.offer(herald.t('Undone.'), null);
      }, function (error) {
        var why = herald.errorText(error);
        self.offer(herald.t('Could not undo: {why}', {why: why}), null);
      });
    },

    hide: function () {
      clearTimeout(this.timer);
      this.inverse = null;
      this.$el.prop('hidden', true).empty();
    }
  });
})(window.herald = window.herald || {});
