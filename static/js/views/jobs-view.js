/*
 * The list of Spark job runs: one card each, with a progress bar that fills
 * as `spark.job.progress` arrives, and the result or error at the end; its
 * start in the reader's time zone. A run that did not say something (a
 * failure published by hand) shows only what it did say: "A run", no bar
 * without progress, its notification's title where no error was given.
 */
(function (herald) {
  'use strict';

  var e = _.escape;
  var STATUS = {running: herald.t('running'), succeeded: herald.t('succeeded'), failed: herald.t('failed')};

  function known(value) {
    return value !== null && value !== undefined;
  }

  // "Boom: x", or one of them, or else the title (and body) of the notification
  // that ended the run: never a colon with nothing on one side.
  function failure(job) {
    if (job.errorType || job.errorMessage) {
      return (job.errorType ? '<strong>' + e(job.errorType) + '</strong>' : '') +
        (job.errorType && job.errorMessage ? ': ' : '') + e(job.errorMessage || '');
    }
    return said(job);
  }

  // "150,000 rows written to /out in 12.3 s", as much of it as the run said.
  function success(job) {
    var parts = [];
    if (known(job.rowsWritten)) {
      var rows = job.rowsWritten.toLocaleString(herald.locale);
      parts.push(job.outputPath ? herald.tHtml('{rows} rows written to {path}', {rows: e(rows),
        path: '<code>' + e(job.outputPath) + '</code>'}) : e(herald.t('{rows} rows written', {rows: rows})));
    }
    if (known(job.duration)) {
      var seconds = {s: job.duration.toLocaleString(herald.locale, {minimumFractionDigits: 1, maximumFractionDigits: 1})};
      parts.push(e(parts.length ? herald.t('in {s} s', seconds) : herald.t('Finished in {s} s', seconds)));
    }
    return parts.length ? parts.join(' ') : said(job);
  }

  function said(job) {
    return e(job.endTitle || '') + (job.endTitle && job.endBody ? ': ' : '') + e(job.endBody || '');
  }

  herald.JobView = Backbone.View.extend({
    tagName: 'li',
    className: 'job',

    // The bar's width is set through the CSSOM in render: the CSP refuses inline style.
    // A run with no progress reported has no bar (a failed run's says where it stopped).
    template: function (job) {
      var html = '<div class="job-head"><strong class="job-name">' + e(job.name || herald.t('A run')) + '</strong>' +
        '<span class="job-status">' + e(STATUS[job.status] || job.status) + '</span>' +
        (job.startedAt ?
          '<span class="job-started">' + herald.tHtml('started {time}', {time: herald.timeHtml(job.startedAt)}) + '</span>' : '') +
        (job.correlationId ? '<code class="job-id">' + e(job.correlationId) + '</code>' : '') + '</div>';
      if (known(job.percent)) {
        html += '<div class="progress" role="progressbar" aria-label="' + e(herald.t('Progress')) + '" ' +
          'aria-valuemin="0" aria-valuemax="100" ' +
          'aria-valuenow="' + e(job.percent) + '"><div class="bar"></div></div>' +
          '<div class="progress-text">' + e(job.status === 'failed' ? herald.t('Stopped at {percent}%', {percent: job.percent}) : job.percent + '%') +
          (job.tasksTotal ? ' · ' + e(herald.t('{done} / {total} tasks', {done: job.tasksCompleted, total: job.tasksTotal})) : '') +
          '</div>';
      } else if (job.status === 'running') {
        html += '<div class="progress-text">' + e(herald.t('No progress reported yet.')) + '</div>';
      }
      if (job.status === 'succeeded') html += '<div class="outcome success">' + success(job) + '</div>';
      if (job.status === 'failed') html += '<div class="outcome failure">' + failure(job) + '</div>';
      return html;
    },

    initialize: function () {
      this.listenTo(this.model, 'change', this.render);
      this.listenTo(this.model, 'remove', this.remove);
    },

    render: function () {
      var data = this.model.toJSON();
      this.$el.attr({'data-id': data.correlationId, 'data-status': data.status})
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
