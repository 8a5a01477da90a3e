/*
 * The list of Spark job runs: one card each, with a progress bar that fills
 * as `spark.job.progress` arrives, and the result or error at the end.
 */
(function (herald) {
  'use strict';

  herald.JobView = Backbone.View.extend({
    tagName: 'li',
    className: 'job',

    template: _.template(
      '<div class="job-head"><strong class="job-name"><%- name %></strong>' +
      '<span class="job-status"><%- status %></span>' +
      '<code class="job-id"><%- id %></code></div>' +
      '<div class="progress" role="progressbar" aria-valuemin="0" aria-valuemax="100" ' +
      'aria-valuenow="<%- percent %>"><div class="bar" style="width: <%- percent %>%"></div></div>' +
      '<div class="progress-text"><%- percent %>%<% if (tasksTotal) { %> · ' +
      '<%- tasksCompleted %> / <%- tasksTotal %> tasks<% } %></div>' +
      '<% if (status === "succeeded") { %><div class="outcome success">' +
      '<% if (rowsWritten !== undefined && rowsWritten !== null) { %><%- rowsWritten.toLocaleString() %> rows written' +
      '<% if (outputPath) { %> to <code><%- outputPath %></code><% } %> <% } %>' +
      'in <%- Number(duration || 0).toFixed(1) %> s</div><% } %>' +
      '<% if (status === "failed") { %><div class="outcome failure">' +
      '<strong><%- errorType %></strong>: <%- errorMessage %></div><% } %>'),

    initialize: function () {
      this.listenTo(this.model, 'change', this.render);
      this.listenTo(this.model, 'remove', this.remove);
    },

    render: function () {
      var data = _.defaults(this.model.toJSON(), {tasksTotal: 0, tasksCompleted: 0,
        rowsWritten: null, outputPath: '', duration: 0, errorType: '', errorMessage: ''});
      this.$el.attr({'data-id': this.model.id, 'data-status': data.status})
        .html(this.template(data));
      return this;
    }
  });

  herald.JobsView = Backbone.View.extend({
    initialize: function (options) {
      this.empty = options.empty;
      this.listenTo(this.collection, 'add', this.addOne);
      this.listenTo(this.collection, 'sort', this.reorder);
    },

    addOne: function (job) {
      var view = new herald.JobView({model: job}).render();
      this.$el.append(view.el);
      this.empty.hide();
      this.reorder();
    },

    // Keep the cards in the collection's order (newest first).
    reorder: function () {
      var list = this.$el;
      this.collection.each(function (job) {
        list.append(list.children('[data-id="' + job.id + '"]'));
      });
    }
  });
})(window.herald = window.herald || {});
