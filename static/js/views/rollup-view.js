/*
 * The latest rollup: when and from how much it was made, a bar chart of the
 * busiest topics (views/rollup-chart.js) and a table of every topic, all
 * times in the reader's time zone. Reloads when a rollup run succeeds; the
 * chart is redrawn at the new width when the window is resized.
 */
(function (herald) {
  'use strict';

  herald.RollupView = Backbone.View.extend({
    rowTemplate: function (row) {
      var e = _.escape;
      return '<tr><td data-label="' + e(herald.t('Topic')) + '"><code>' + e(row.topic) + '</code></td>' +
        '<td class="num" data-label="' + e(herald.t('Notifications')) + '">' + e(row.total.toLocaleString(herald.locale)) + '</td>' +
        '<td data-label="' + e(herald.t('First seen')) + '">' + herald.timeHtml(row.first_seen) + '</td>' +
        '<td data-label="' + e(herald.t('Last seen')) + '">' + herald.timeHtml(row.last_seen) + '</td></tr>';
    },

    initialize: function (options) {
      this.summary = null;
      this.listenTo(options.jobs, 'change:status', function (job) {
        if (job.get('status') === 'succeeded' && job.get('name') === 'rollup') this.load();
      });
      this.redraw = _.debounce(_.bind(this.renderChart, this), 150);
      $(window).on('resize', this.redraw);
      this.load();
    },

    remove: function () {
      $(window).off('resize', this.redraw);
      return Backbone.View.prototype.remove.call(this);
    },

    // Ask first whether a rollup has finished: before the first one the summary's
    // answer is a 404, which the browser logs as a failed request.
    load: function () {
      var view = this;
      herald.client.get('/api/spark/rollup/running').then(function (state) {
        if (!state.has_summary) return view.none();
        return herald.client.get('/api/spark/rollup').then(function (summary) { view.render(summary); });
      }).catch(function (error) {
        if (error.status === 404) return view.none();  // removed between the two answers
        view.$('.rollup-state').text(herald.t('Cannot read the latest rollup: {why}', {why: herald.errorText(error)}));
      });
    },

    none: function () {
      this.summary = null;
      this.$('.rollup-state').addClass('empty').text(herald.t('No rollup yet: none has run. “Run rollup now” makes one.'));
      this.$('.rollup-figure, .topics-block').prop('hidden', true);
    },

    render: function (summary) {
      var topics = summary.topics || [];
      var firsts = _.compact(_.pluck(topics, 'first_seen')).sort();
      var lasts = _.compact(_.pluck(topics, 'last_seen')).sort();
      this.summary = summary;
      this.drawnWidth = null;  // a new summary is always drawn
      this.$('.rollup-state').removeClass('empty').html(
        firsts.length ? herald.tHtml('Made {time} from {n} notifications, sent between {first} and {last}.', {
          time: herald.timeHtml(summary.generated_at), n: _.escape(Number(summary.rows_read || 0).toLocaleString(herald.locale)),
          first: herald.timeHtml(firsts[0]), last: herald.timeHtml(lasts[lasts.length - 1])}) :
          herald.tHtml('Made {time} from {n} notifications.', {time: herald.timeHtml(summary.generated_at),
            n: _.escape(Number(summary.rows_read || 0).toLocaleString(herald.locale))}));
      this.$('.rollup-figure, .topics-block').prop('hidden', !topics.length);
      this.renderChart();
      this.$('tbody').html(_.map(topics, this.rowTemplate, this).join(''));
      return this;
    },

    // At the holder's current width; nothing to draw before a summary or while hidden.
    renderChart: function () {
      var holder = this.$('.chart-holder');
      var width = Math.floor(holder.width());
      if (!this.summary || !width || width === this.drawnWidth && holder.children().length) return;
      this.drawnWidth = width;
      holder.empty().append(herald.rollupChart(this.summary.topics || [], width));
    }
  });
})(window.herald = window.herald || {});
