/*
 * The rollup's chart: one horizontal bar per topic, the busiest eight, and
 * one "other" bar for the rest together, each with its value written at
 * its end; "Topic" and "Notifications" name the axes. The scale is the named
 * bars': an "other" bar longer than the busiest named one is drawn cut, to
 * the plot's end with a break mark (its value still written in full), so it
 * never squashes the named ones to slivers.
 *
 * Plain SVG drawn at the holder's own width in CSS pixels (never scaled by
 * a viewBox), so its text stays readable on a phone; colours come from
 * classes in the stylesheet (the CSP refuses inline style).
 * `herald.rollupBars(topics)` is the data part: [{label, total, other}].
 */
(function (herald) {
  'use strict';

  var SVG = 'http://www.w3.org/2000/svg';
  var TOP = 8;                 // topics shown by name
  var ROW = 28, BAR = 18;      // px per bar, px of bar
  var CHAR = 6.8;              // px per character of 12 px text, roughly
  var HEAD = 22, FOOT = 44;    // px above the bars (axis title), below (ticks, axis title)
  var COMPACT = new Intl.NumberFormat(herald.locale, {notation: 'compact'});

  function node(name, attributes, text) {
    var element = document.createElementNS(SVG, name);
    _.each(attributes, function (value, key) { element.setAttribute(key, value); });
    if (text !== undefined) element.textContent = text;
    return element;
  }

  // The topics, busiest first: the first TOP by name, the rest as one "other" bar.
  herald.rollupBars = function (topics) {
    var sorted = _.sortBy(topics, function (row) { return -row.total; });
    var bars = _.map(sorted.slice(0, TOP), function (row) {
      return {label: row.topic, total: row.total, other: false};
    });
    var rest = sorted.slice(TOP);
    if (rest.length === 1) bars.push({label: rest[0].topic, total: rest[0].total, other: false});
    if (rest.length > 1) {
      bars.push({label: herald.t('other ({n} topics)', {n: rest.length}), other: true,
                 total: _.reduce(rest, function (sum, row) { return sum + row.total; }, 0)});
    }
    return bars;
  };

  // A round step giving about `count` ticks from 0 to max.
  function tickStep(max, count) {
    var raw = max / Math.max(count, 1);
    var magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    var n = raw / magnitude;
    return Math.max(magnitude * (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10), 1);  // whole numbers
  }

  function fit(text, width) {
    var room = Math.max(Math.floor(width / CHAR), 4);
    return text.length <= room ? text : text.slice(0, room - 1) + '…';
  }

  herald.rollupChart = function (topics, width) {
    var bars = herald.rollupBars(topics);
    var longest = _.max(_.map(bars, function (bar) { return bar.label.length; }).concat([5]));
    var widest = _.max(_.map(bars, function (bar) { return bar.total.toLocaleString(herald.locale).length; }));
    var labels = Math.min(Math.max(longest * CHAR + 10, 60), width * 0.42);
    var left = labels, right = width - (widest * CHAR + 10);
    var plot = Math.max(right - left, 40);
    var bottom = HEAD + bars.length * ROW;
    var named = _.pluck(_.reject(bars, 'other'), 'total');
    var top = (named.length ? _.max(named) : _.max(_.pluck(bars, 'total'))) || 1;  // the busiest named bar fills the plot
    var step = tickStep(top, Math.max(Math.floor(plot / 90), 2));
    var scale = plot / top;
    var chart = node('svg', {width: width, height: bottom + FOOT, class: 'chart', role: 'img',
      'aria-label': herald.t('Notifications per topic:') + ' ' + _.map(bars, function (bar) {
        return bar.label + ' ' + bar.total.toLocaleString(herald.locale);
      }).join('; ')});

    chart.appendChild(node('text', {x: 0, y: 14, class: 'axis-title'}, herald.t('Topic')));
    for (var tick = 0; tick <= top; tick += step) {
      var x = left + tick * scale;
      chart.appendChild(node('line', {x1: x, x2: x, y1: HEAD - 4, y2: bottom, class: 'grid'}));
      chart.appendChild(node('text', {x: x, y: bottom + 16, 'text-anchor': 'middle', class: 'tick'},
                             COMPACT.format(tick)));
    }
    chart.appendChild(node('line', {x1: left, x2: left, y1: HEAD - 4, y2: bottom, class: 'axis'}));
    chart.appendChild(node('text', {x: left + plot / 2, y: bottom + 38, 'text-anchor': 'middle',
                                    class: 'axis-title'}, herald.t('Notifications')));

    _.each(bars, function (bar, i) {
      var y = HEAD + i * ROW + (ROW - BAR) / 2, cut = bar.total > top;
      var length = cut ? plot : Math.max(bar.total * scale, 1);
      var label = node('text', {x: left - 6, y: y + BAR / 2 + 4, 'text-anchor': 'end',
                                class: 'label' + (bar.other ? ' other' : '')},
                       fit(bar.label, labels - 10));
      label.appendChild(node('title', {}, bar.label));
      chart.appendChild(label);
      var rect = node('rect', {x: left, y: y, width: length, height: BAR, rx: 2,
                               class: 'bar' + (bar.other ? ' other' : '') + (cut ? ' cut' : ''), 'data-topic': bar.label});
      rect.appendChild(node('title', {}, bar.label + ': ' + bar.total.toLocaleString(herald.locale)));
      chart.appendChild(rect);
      if (cut) {  // a break mark: two slanted gaps near its end, "longer than drawn"
        _.each([14, 8], function (back) {
          var x = left + plot - back;
          chart.appendChild(node('line', {x1: x - 3, x2: x + 3, y1: y + BAR + 2, y2: y - 2, class: 'break'}));
        });
      }
      chart.appendChild(node('text', {x: left + length + 5, y: y + BAR / 2 + 4, class: 'value'},
                             bar.total.toLocaleString(herald.locale)));
    });
    return chart;
  };
})(window.herald = window.herald || {});
