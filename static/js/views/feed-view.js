/*
 * The live feed: newest first, styled by severity, with relative times.
 *
 * Every text field is escaped (`_.escape`), so a title or body that holds
 * HTML shows as the literal text it is. Templates are plain functions, not
 * `_.template`, which compiles with `new Function` and so would need the
 * Content-Security-Policy to allow 'unsafe-eval'.
 */
(function (herald) {
  'use strict';

  herald.FeedView = Backbone.View.extend({
    template: function (n) {
      var e = _.escape;
      return '<div class="meta">' +
          '<span class="severity">' + e(n.severity) + '</span>' +
          '<span class="topic">' + e(n.topic) + '</span>' +
          '<time datetime="' + e(n.ts) + '"></time>' +
        '</div>' +
        '<div class="title">' + e(n.title) + '</div>' +
        (n.body ? '<div class="body">' + e(n.body) + '</div>' : '');
    },

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
