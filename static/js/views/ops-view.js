/*
 * The Operations page's model and view.
 *
 * `herald.OpsStatus` is GET /api/ops/status (app/ops/console.py), fetched every
 * REFRESH_MS; `presenceChanged` applies a live `presence` event to it at
 * once. `herald.OpsView` draws it: a summary line (a polite live region, so
 * a worker going missing is announced), workers with their health in words
 * and colour, web processes, queues, who is online and the last Spark runs.
 * Times are the reader's own (herald.timeHtml), ages in seconds.
 */
(function (herald) {
  'use strict';

  var REFRESH_MS = 2000;
  var e = _.escape;

  herald.OpsStatus = Backbone.Model.extend({
    url: '/api/ops/status',
    defaults: {web: [], workers: [], presence: [], faults: {}, missing: {}, spark: []},

    presenceChanged: function (change) {
      var online = _.reject(this.get('presence'), function (p) { return p.user === change.user; });
      if (change.online) {
        online.push({user: change.user, since: change.at, connections: null});
        online = _.sortBy(online, 'user');
      }
      this.set('presence', online);
    }
  });

  function ago(value) {
    if (value === null || value === undefined) return '—';
    return value < 1 ? 'just now' : seconds(value).replace(/^(\d+)\.\d/, '$1') + ' ago';
  }

  // A duration for reading: 0.4 s, 12 s, 5 min, 3 h, 2 days.
  function seconds(value) {
    if (value === null || value === undefined) return '—';
    if (value < 10) return value.toFixed(1) + ' s';
    if (value < 120) return Math.round(value) + ' s';
    if (value < 7200) return Math.round(value / 60) + ' min';
    if (value < 172800) return Math.round(value / 3600) + ' h';
    return Math.round(value / 86400) + ' days';
  }

  // A reported value for reading: a list is its items with a comma and a space
  // between them (where a line may break: JSON.stringify gave one long word, which
  // pushed the Reports column past its card), an object its "key value" pairs.
  function reported(value) {
    if (value === null || value === undefined) return '—';
    if (_.isArray(value)) return value.length ? _.map(value, reported).join(', ') : 'none';
    if (_.isObject(value)) {
      return _.map(value, function (item, key) { return key + ' ' + reported(item); }).join(', ');
    }
    return String(value);
  }

  function details(record) {
    return _.map(record.details || {}, function (value, key) {
      return '<span class="report"><span class="key">' + e(key.replace(/_/g, ' ')) + ':</span> ' +
        e(reported(value)) + '</span>';
    }).join(' ');
  }

  function cell(label, html, extra) {
    return '<td data-label="' + e(label) + '"' + (extra || '') + '>' + html + '</td>';
  }

  herald.OpsView = Backbone.View.extend({
    initialize: function () {
      this.listenTo(this.model, 'sync', this.render);
      this.listenTo(this.model, 'error', this.failed);
      this.listenTo(this.model, 'change:presence', this.presenceChanged);
      this.timer = setInterval(_.bind(function () { this.model.fetch(); }, this), REFRESH_MS);
    },

    remove: function () {
      clearInterval(this.timer);
      return Backbone.View.prototype.remove.call(this);
    },

    // Who is online changed between two refreshes: the list, and the summary's count
    // (once there is a summary: before the first answer it still says it is loading).
    presenceChanged: function () {
      this.renderOnline();
      if (this.model.has('at')) this.renderSummary(this.model.toJSON());
    },

    failed: function (model, xhr) {
      var reason = (xhr && xhr.responseJSON && xhr.responseJSON.error) || 'no answer';
      this.$('#ops-summary').text('Cannot read the system\'s state: ' + reason + '. Retrying.')
        .addClass('error');
    },

    render: function () {
      var data = this.model.toJSON();
      this.renderSummary(data);
      this.renderWorkers(data);
      this.renderWeb(data);
      this.renderQueues(data);
      this.renderOnline();
      this.renderSpark(data);
      this.$('#ops-updated').html('Refreshed ' + herald.timeHtml(new Date(data.at * 1000)) +
                                  ', every ' + REFRESH_MS / 1000 + ' s.');
      return this;
    },

    renderSummary: function (data) {
      var dead = _.where(data.workers, {alive: false});
      var faults = _.keys(data.faults), missing = _.values(data.missing);
      var problems = _.map(dead, function (b) { return b.role + ' ' + b.instance + ' is missing'; })
        .concat(_.map(faults, function (w) { return w + ' reports a fault'; }), missing,
                _.map(_.where(data.web, {alive: false}), function (p) {
                  return 'web process ' + p.process + ' is not reporting';
                }));
      var text;
      if (problems.length) {
        text = problems.length + (problems.length === 1 ? ' problem: ' : ' problems: ') +
          _.uniq(problems).join('; ') + '.';
      } else {
        text = 'All ' + data.workers.length + ' workers alive · ' + data.web.length +
          ' web process' + (data.web.length === 1 ? '' : 'es') + ' · ' + data.presence.length +
          ' online.';
      }
      var summary = this.$('#ops-summary');
      if (summary.text() !== text) summary.text(text);  // announced only when it changes
      summary.toggleClass('error', problems.length > 0);
    },

    renderWorkers: function (data) {
      var rows = _.map(data.workers, function (b) {
        var health = b.alive ? '<span class="health alive"><span aria-hidden="true">✓</span> Alive</span>' :
          '<span class="health missing"><span aria-hidden="true">✕</span> Missing</span>';
        return '<tr class="' + (b.alive ? 'alive' : 'missing') + '" data-role="' + e(b.role) +
          '" data-instance="' + e(b.instance) + '">' +
          cell('Worker', '<strong>' + e(b.role) + '</strong> <span class="instance">' + e(b.instance) + '</span>') +
          cell('Health', health) +
          cell('Last heartbeat', '<span title="every ' + e(b.every) + ' s">' + e(ago(b.age)) + '</span>') +
          cell('Reports', details(b)) + '</tr>';
      });
      this.$('#worker-rows').html(rows.join(''));
      this.$('#workers-empty').prop('hidden', rows.length > 0);
      this.$('#worker-rows').closest('table').prop('hidden', rows.length === 0);
      this.$('#worker-faults').html(_.map(data.faults, function (fault, worker) {
        return '<li class="error"><strong>' + e(worker) + '</strong>: ' + e(fault.detail) +
          ' (since ' + herald.timeHtml(new Date(fault.since * 1000)) + ')</li>';
      }).join(''));
    },

    renderWeb: function (data) {
      this.$('#web-rows').html(_.map(data.web, function (p) {
        var lag = p.relay_lag_p99 === null || p.relay_lag_p99 === undefined ? '—' :
          (p.relay_lag_p99_over ? '> ' : '≤ ') + Math.round(p.relay_lag_p99 * 1000) + ' ms';
        var relay = !p.alive ? ' <span class="health missing">not reporting</span>' :
          p.relay_connected ? '' : ' <span class="health missing">relay not following</span>';
        return '<tr class="' + (p.alive ? 'alive' : 'missing') + '">' + cell('Process', e(p.process) + relay) +
          cell('Clients', e(p.connected_clients) + (p.sse_streams ? ' + ' + e(p.sse_streams) + ' streams' : ''),
               ' class="num"') +
          cell('Deliveries/s', e(Math.round(p.deliveries_per_second)), ' class="num"') +
          cell('Relay lag (p99)', e(lag), ' class="num"') + '</tr>';
      }).join(''));
    },

    renderQueues: function (data) {
      var d = data.digests || {}, w = data.webhooks || {}, a = data.archiver || {};
      var items = [
        ['Digests', (d.pending || 0) + ' pending' + (d.oldest_pending_seconds !== null &&
          d.oldest_pending_seconds !== undefined ? ', oldest ' + seconds(d.oldest_pending_seconds) : '') +
          (d.lag ? ', ' + d.lag + ' not yet read' : '') + ', ' + (d.outbox || 0) + ' critical to email'],
        ['Webhooks', (w.waiting || 0) + ' waiting' + (w.oldest_waiting_seconds !== null &&
          w.oldest_waiting_seconds !== undefined ? ', oldest ' + seconds(w.oldest_waiting_seconds) : '') +
          ', ' + (w.parked || 0) + ' parked, ' + (w.endpoints || 0) + ' endpoints'],
        ['ZeroMQ bridge backlog', String(data.bridge_backlog || 0)],
        ['Archiver', a.leader ? 'at ' + (a.position || 'the start') + ', ' + seconds(a.lag_seconds) +
          ' behind (writer ' + a.leader + ')' : 'no archiver is writing']
      ];
      this.$('#queues').html(_.map(items, function (item) {
        return '<div><dt>' + e(item[0]) + '</dt><dd>' + e(item[1]) + '</dd></div>';
      }).join(''));
    },

    renderOnline: function () {
      var online = this.model.get('presence') || [];
      this.$('#online-count').text('(' + online.length + ')');
      this.$('#online').html(_.map(online, function (p) {
        return '<li data-user="' + e(p.user) + '"><strong>' + e(p.user) + '</strong> <span class="since">since ' +
          herald.timeHtml(new Date(p.since)) + (p.connections ? ' · ' + e(p.connections) +
          (p.connections === 1 ? ' connection' : ' connections') : '') + '</span></li>';
      }).join(''));
      this.$('#online-empty').prop('hidden', online.length > 0);
    },

    renderSpark: function (data) {
      this.$('#spark-runs').html(_.map(data.spark, function (run) {
        var ok = run.topic === 'spark.job.succeeded';
        return '<li class="' + (ok ? 'alive' : 'missing') + '"><span class="health ' + (ok ? 'alive' : 'missing') +
          '">' + (ok ? 'Succeeded' : 'Failed') + '</span> ' + e(run.title) + ' <span class="since">' +
          herald.timeHtml(new Date(run.at * 1000)) + '</span></li>';
      }).join(''));
      this.$('#spark-empty').prop('hidden', data.spark.length > 0);
    }
  });
})(window.herald = window.herald || {});
