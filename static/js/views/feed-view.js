/*
 * The live feed: newest first, styled by severity, with relative times.
 *
 * Every text field is escaped by the template (`<%- %>`), so a title or body
 * that holds HTML shows as the literal text it is.
 */
(function (herald) {
  'use strict';

  herald.FeedView = Backbone.View.extend({
    template: _.template(
      '<div class="meta">' +
        '<span class="severity"><%- severity %></span>' +
        '<span class="topic"><%- topic %></span>' +
        '<time datetime="<%- ts %>"></time>' +
      '</div>' +
      '<div class="title"><%- title %></div>' +
      '<% if (body) { %><div class="body"><%- body %></div><% } %>'),

    events: {
      'click li': 'markRead'
    },

    initialize: function (options) {
      this.empty = options.empty;
      this.listenTo(this.collection, 'add', this.addOne);
      this.listenTo(this.collection, 'remove', this.removeOne);
      this.listenTo(this.collection, 'reset', this.render);
      this.listenTo(this.collection, 'change:read', this.showRead);
      this.timer = setInterval(_.bind(this.refreshTimes, this), 15000);
    },

    render: function () {
      this.$el.empty();
      this.collection.each(function (model) { this.addOne(model); }, this);
      return this;
    },

    addOne: function (model) {
      var item = $('<li>')
        .addClass('notification severity-' + model.get('severity'))
        .toggleClass('unread', !model.get('read'))
        .attr('data-id', model.id)
        .attr('data-topic', model.get('topic'))
        .html(this.template(_.defaults(model.toJSON(), {body: ''})));
      item.find('time').text(model.relativeTime());
      var index = this.collection.indexOf(model);
      var next = this.$el.children().eq(index);
      if (next.length) item.insertBefore(next); else this.$el.append(item);
      this.empty.toggle(this.collection.isEmpty());
    },

    removeOne: function (model) {
      this.itemFor(model).remove();
      this.empty.toggle(this.collection.isEmpty());
    },

    showRead: function (model) {
      this.itemFor(model).toggleClass('unread', !model.get('read'));
    },

    markRead: function (event) {
      var model = this.collection.get($(event.currentTarget).attr('data-id'));
      if (model) this.collection.markRead(model);
    },

    itemFor: function (model) {
      return this.$el.children().filter(function () {
        return this.getAttribute('data-id') === model.id;
      });
    },

    refreshTimes: function () {
      var now = Date.now(), collection = this.collection;
      this.$el.children().each(function () {
        var model = collection.get(this.getAttribute('data-id'));
        if (model) $(this).find('time').text(model.relativeTime(now));
      });
    },

    remove: function () {
      clearInterval(this.timer);
      return Backbone.View.prototype.remove.apply(this, arguments);
    }
  });
})(window.herald = window.herald || {});
