/*
 * The latest rollup: a stacked bar chart of notification volume per topic
 * per day (plain SVG), and a table of topics. Reloads when a rollup run
 * succeeds.
 */
(function (herald) {
  'use strict';

  var SVG = 'http://www.w3.org/2000/svg';
  var COLOURS = ['#3451d1', '#1f9d55', '#d98c00', '#d64545', '#8e1b6d', '#0f8b8d',
                 '#7a5c00', '#5b6ee1', '#b8336a', '#2d7d46', '#6b7385', '#c2410c'];

  function svg(name, attributes) {
    var node = document.createElementNS(SVG, name);
    _.each(attributes, function (value, key) { node.setAttribute(key, value); });
    return node;
  }

  herald.RollupView = Backbone.View.extend({
    rowTemplate: function (row) {
      var e = _.escape;
      return '<tr><td><code>' + e(row.topic) + '</code></td>' +
        '<td class="num">' + e(row.total.toLocaleString()) + '</td>' +
        '<td>' + e(row.first_seen) + '</td><td>' + e(row.last_seen) + '</td></tr>';
    },

    initialize: function (options) {
      this.listenTo(options.jobs, 'change:status', function (job) {
        if (job.get('status') === 'succeeded' && job.get('name') === 'rollup') this.load();
      });
      this.load();
    },

    load: function () {
      var view = this;
      herald.client.get('/api/spark/rollup')
        .then(function (summary) { view.render(summary); }, function () {
          view.$('.rollup-state').text('No rollup yet: run one above.');
        });
    },

    render: function (summary) {
      this.$('.rollup-state').text('Generated ' + summary.generated_at + ' from ' +
        summary.rows_read.toLocaleString() + ' notifications.');
      this.renderChart(summary);
      this.$('tbody').html(_.map(summary.topics, function (row) {
        return this.rowTemplate(row);
      }, this).join(''));
      return this;
    },

    renderChart: function (summary) {
      var topics = _.uniq(_.pluck(summary.volume, 'topic'));
      var colour = _.object(topics, _.map(topics, function (t, i) { return COLOURS[i % COLOURS.length]; }));
      var days = summary.days;
      var byDay = _.groupBy(summary.volume, 'day');
      var max = _.max(_.map(days, function (day) {
        return _.reduce(byDay[day] || [], function (sum, row) { return sum + row.count; }, 0);
      })) || 1;
      var width = 640, height = 220, left = 40, bottom = 24;
      var chart = svg('svg', {viewBox: '0 0 ' + width + ' ' + height, class: 'chart',
                              role: 'img', 'aria-label': 'Notifications per topic per day'});
      var step = (width - left) / Math.max(days.length, 1);
      var scale = (height - bottom - 10) / max;
      chart.appendChild(svg('line', {x1: left, y1: height - bottom, x2: width, y2: height - bottom,
                                     class: 'axis'}));
      var label = svg('text', {x: left - 6, y: 14, 'text-anchor': 'end', class: 'tick'});
      label.textContent = max.toLocaleString();
      chart.appendChild(label);
      _.each(days, function (day, i) {
        var y = height - bottom;
        _.each(byDay[day] || [], function (row) {
          var h = row.count * scale;
          y -= h;
          var bar = svg('rect', {x: left + i * step + step * 0.15, y: y, width: step * 0.7,
                                 height: Math.max(h, 0.5), fill: colour[row.topic],
                                 'data-topic': row.topic, 'data-day': day});
          var tip = svg('title', {});
          tip.textContent = row.topic + ' on ' + day + ': ' + row.count.toLocaleString();
          bar.appendChild(tip);
          chart.appendChild(bar);
        });
        var text = svg('text', {x: left + i * step + step / 2, y: height - 6,
                                'text-anchor': 'middle', class: 'tick'});
        text.textContent = day.slice(5);
        chart.appendChild(text);
      });
      this.$('.chart-holder').empty().append(chart);
      // Colours through the CSSOM: a style attribute would be inline style, which the CSP refuses.
      this.$('.legend').empty().append(_.map(topics, function (topic) {
        var swatch = $('<i>').css('background', colour[topic]);
        return $('<span>').append(swatch, document.createTextNode(topic));
      }));
    }
  });
})(window.herald = window.herald || {});
