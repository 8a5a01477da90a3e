/*
 * Delete, asked first, inline: the row's Delete button turns the row into
 * "Delete …? Yes / No" with the focus on No; Escape or No keeps it. Mixed into
 * a row view (the digests' and the webhooks'), which renders the question
 * while `confirming` is true, names its record by `confirmName`, and has a
 * `page` with `deleted(name)` and a `failed(xhr)` of its own.
 */
(function (herald) {
  'use strict';

  herald.ConfirmDelete = {
    ask: function () {
      this.confirming = true;
      this.render();
      this.$('.cancel-delete').trigger('focus');
    },

    keep: function () {
      this.confirming = false;
      this.render();
      this.$('.delete').trigger('focus');
    },

    escape: function (event) {
      if (event.key === 'Escape') this.keep();
    },

    destroy: function () {
      var view = this, page = this.page, name = this.model.get(this.confirmName);
      this.$('.confirm button').prop('disabled', true);
      this.model.destroy({wait: true})
        .done(function () { page.deleted(name); })
        .fail(function (xhr) {
          view.$('.confirm button').prop('disabled', false);
          view.failed(xhr);
        });
    }
  };
})(window.herald = window.herald || {});
