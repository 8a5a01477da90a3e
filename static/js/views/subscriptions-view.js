/*
 * The subscriptions panel: add a topic prefix, remove one, see errors.
 */
(function (herald) {
  'use strict';

  herald.SubscriptionsView = Backbone.View.extend({
    itemTemplate: function (topic) {
      var id = _.escape(topic.id);
      return '<li data-topic="' + id + '"><code>' + id + '</code> ' +
        '<button type="button" class="unsubscribe" aria-label="Unsubscribe from ' + id + '">' +
        'Unsubscribe</button></li>';
    },

    events: {
      'submit .subscribe-form': 'subscribe',
      'click .unsubscribe': 'unsubscribe'
    },

    initialize: function () {
      this.listenTo(this.collection, 'update reset sort', this.render);
      this.listenTo(herald.dispatcher, 'subscriptions:error', this.showError);
      this.listenTo(herald.dispatcher, 'subscriptions', this.clearError);
      this.render();
    },

    render: function () {
      var html = this.collection.map(function (model) {
        return this.itemTemplate(model.toJSON());
      }, this).join('');
      this.$('.topics').html(html);
      return this;
    },

    subscribe: function (event) {
      event.preventDefault();
      var input = this.$('input[name=topic]');
      var topic = $.trim(input.val());
      if (!topic) return;
      this.collection.subscribe(topic);
      input.val('');
    },

    unsubscribe: function (event) {
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
