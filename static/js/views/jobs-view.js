/*
 * The list of Spark job runs: one card each, with a progress bar that fills
 * as `spark.job.progress` arrives, and the result or error at the end; its
 * start in the reader's time zone.
 */
(function (herald) {
  'use strict';

  herald.JobView = Backbone.View.extend({
    tagName: 'li',
    className: 'job',

    // The bar's width is set through the CSSOM in render: the CSP refuses inline style.
    template: function (job) {
      var e = _.escape;
      var html = '<div class="job-head"><strong class="job-name">' + e(job.name) + '</strong>' +
        '<span class="job-status">' + e(job.status) + '</span>' +
        (job.startedAt ?
          '<span class="job-started">started ' + herald.timeHtml(job.startedAt) + '</span>' : '') +
        '<code class="job-id">' + e(job.correlationId) + '</code></div>' +
        '<div class="progress" role="progressbar" aria-label="Progress" ' +
        'aria-valuemin="0" aria-valuemax="100" ' +
        'aria-valuenow="' + e(job.percent) + '"><div class="bar"></div></div>' +
        '<div class="progress-text">' + e(job.percent) + '%' +
        (job.tasksTotal ? ' · ' + e(job.tasksCompleted) + ' / ' + e(job.tasksTotal) + ' tasks' : '') +
        '</div>';
      if (job.status === 'succeeded') {
        html += '<div class="outcome success">';
        if (job.rowsWritten !== undefined && job.rowsWritten !== null) {
          html += e(job.rowsWritten.toLocaleString()) + ' rows written' +
            (job.outputPath ? ' to <code>' + e(job.outputPath) + '</code>' : '') + ' ';
        }
        html += 'in ' + e(Number(job.duration || 0).toFixed(1)) + ' s</div>';
      }
      if (job.status === 'failed') {
        html += '<div class="outcome failure"><strong>' + e(job.errorType) + '</strong>: ' +
          e(job.errorMessage) + '</div>';
      }
      return html;
    },

    initialize: function () {
      this.listenTo(this.model, 'change', this.render);
      this.listenTo(this.model, 'remove', this.remove);
    },

    render: function () {
      var data = _.defaults(this.model.toJSON(), {startedAt: '', tasksTotal: 0, tasksCompleted: 0,
        rowsWritten: null, outputPath: '', duration: 0, errorType: '', errorMessage: ''});
      this.$el.attr({'data-id': this.model.get('correlationId'), 'data-status': data.status})
        .html(this.template(data));
      this.$('.bar').css('width', Number(data.percent) + '%');
      return this;
    }
  });

  herald.JobsView = Backbone.View.extend({
    initialize: function (options) {
      this.empty = options.empty;
      this.listenTo(this.collection, 'add', this.addOne);
      this.listenTo(this.collection, 'sort', this.reorder);
      this.views = {};  // model cid -> its JobView
    },

    addOne: function (job) {
      var view = this.views[job.cid] = new herald.JobView({model: job}).render();
      this.$el.append(view.el);
      this.empty.hide();
      this.reorder();
    },

    // Keep the cards in the collection's order (newest first), by their views
    // (never by a selector built from an id a publisher chose).
    reorder: function () {
      var list = this.$el, views = this.views;
      this.collection.each(function (job) {
        if (views[job.cid]) list.append(views[job.cid].el);
      });
    }
  });
})(window.herald = window.herald || {});
