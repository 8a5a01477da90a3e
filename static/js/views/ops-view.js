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
    return value < 1 ? herald.t('just now') : herald.t('{duration} ago', {duration: seconds(value).replace(/^(\d+)[.,]\d/, '$1')});
  }

  // A duration for reading: 0.4 s, 12 s, 5 min, 3 h, 2 days.
  function seconds(value) {
    if (value === null || value === undefined) return '—';
    if (value < 10) return value.toLocaleString(herald.locale, {minimumFractionDigits: 1, maximumFractionDigits: 1}) + ' s';
    if (value < 120) return Math.round(value) + ' s';
    if (value < 7200) return Math.round(value / 60) + ' min';
    if (value < 172800) return Math.round(value / 3600) + ' h';
    return herald.tn('{n} day', '{n} days', Math.round(value / 86400));
  }

  // A reported value for reading: a list is its items with a comma and a space
  // between them (where a line may break: JSON.stringify gave one long word, which
  // pushed the Reports column past its card), an object its "key value" pairs.
  function reported(value) {
    if (value === null || value === undefined) return '—';
    if (_.isArray(value)) return value.length ? _.map(value, reported).join(', ') : herald.t('none');
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
      var reason = (xhr && xhr.responseJSON && xhr.responseJSON.error) || herald.t('no answer');
      this.$('#ops-summary').text(herald.t('Cannot read the system’s state: {why} Retrying.', {why: herald.errorText({message: reason})}))
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
      this.$('#ops-updated').html(herald.tHtml('Refreshed {time}, every {n} s.', {
        time: herald.timeHtml(new Date(data.at * 1000)), n: REFRESH_MS / 1000}));
      return this;
    },

    renderSummary: function (data) {
      var dead = _.where(data.workers, {alive: false});
      var faults = _.keys(data.faults), missing = _.values(data.missing);
      var problems = _.map(dead, function (b) { return herald.t('{worker} is missing', {worker: b.role + ' ' + b.instance}); })
        .concat(_.map(faults, function (w) { return herald.t('{worker} reports a fault', {worker: w}); }), missing,
                _.map(_.where(data.web, {alive: false}), function (p) {
                  return herald.t('web process {process} is not reporting', {process: p.process});
                }));
      var text;
      if (problems.length) {
        text = herald.tn('{n} problem: {list}.', '{n} problems: {list}.', problems.length, {list: _.uniq(problems).join('; ')});
      } else {
        text = herald.t('All {n} workers alive', {n: data.workers.length}) + ' · ' +
          herald.tn('{n} web process', '{n} web processes', data.web.length) + ' · ' +
          herald.t('{n} online.', {n: data.presence.length});
      }
      var summary = this.$('#ops-summary');
      if (summary.text() !== text) summary.text(text);  // announced only when it changes
      summary.toggleClass('error', problems.length > 0);
    },

    renderWorkers: function (data) {
      var rows = _.map(data.workers, function (b) {
        var health = b.alive ? '<span class="health alive"><span aria-hidden="true">✓</span> ' + e(herald.t('Alive')) + '</span>' :
          '<span class="health missing"><span aria-hidden="true">✕</span> ' + e(herald.t('Missing')) + '</span>';
        return '<tr class="' + (b.alive ? 'alive' : 'missing') + '" data-role="' + e(b.role) +
          '" data-instance="' + e(b.instance) + '">' +
          cell(herald.t('Worker'), '<strong>' + e(b.role) + '</strong> <span class="instance">' + e(b.instance) + '</span>') +
          cell(herald.t('Health'), health) +
          cell(herald.t('Last heartbeat'), '<span title="' + e(herald.t('every {n} s', {n: b.every})) + '">' + e(ago(b.age)) + '</span>') +
          cell(herald.t('Reports'), details(b)) + '</tr>';
      });
      this.$('#worker-rows').html(rows.join(''));
      this.$('#workers-empty').prop('hidden', rows.length > 0);
      this.$('#worker-rows').closest('table').prop('hidden', rows.length === 0);
      this.$('#worker-faults').html(_.map(data.faults, function (fault, worker) {
        return '<li class="error"><strong>' + e(worker) + '</strong>: ' + e(fault.detail) +
          ' (' + herald.tHtml('since {time}', {time: herald.timeHtml(new Date(fault.since * 1000))}) + ')</li>';
      }).join(''));
    },

    renderWeb: function (data) {
      this.$('#web-rows').html(_.map(data.web, function (p) {
        var lag = p.relay_lag_p99 === null || p.relay_lag_p99 === undefined ? '—' :
          (p.relay_lag_p99_over ? '> ' : '≤ ') + Math.round(p.relay_lag_p99 * 1000) + ' ms';
        var relay = !p.alive ? ' <span class="health missing">' + e(herald.t('not reporting')) + '</span>' :
          p.relay_connected ? '' : ' <span class="health missing">' + e(herald.t('relay not following')) + '</span>';
        return '<tr class="' + (p.alive ? 'alive' : 'missing') + '">' + cell(herald.t('Process'), e(p.process) + relay) +
          cell(herald.t('Clients'), e(p.connected_clients) + (p.sse_streams ? ' + ' + e(herald.t('{n} streams', {n: p.sse_streams})) : ''),
               ' class="num"') +
          cell(herald.t('Deliveries/s'), e(Math.round(p.deliveries_per_second)), ' class="num"') +
          cell(herald.t('Relay lag (p99)'), e(lag), ' class="num"') + '</tr>';
      }).join(''));
    },

    renderQueues: function (data) {
      var d = data.digests || {}, w = data.webhooks || {}, a = data.archiver || {}, start = herald.t('the start');
      var items = [
        [herald.t('Digests'), herald.t('{n} pending', {n: d.pending || 0}) + (d.oldest_pending_seconds !== null &&
          d.oldest_pending_seconds !== undefined ? ', ' + herald.t('oldest {age}', {age: seconds(d.oldest_pending_seconds)}) : '') +
          (d.lag ? ', ' + herald.t('{n} not yet read', {n: d.lag}) : '') + ', ' + herald.t('{n} critical to email', {n: d.outbox || 0})],
        [herald.t('Webhooks'), herald.t('{n} waiting', {n: w.waiting || 0}) + (w.oldest_waiting_seconds !== null &&
          w.oldest_waiting_seconds !== undefined ? ', ' + herald.t('oldest {age}', {age: seconds(w.oldest_waiting_seconds)}) : '') +
          ', ' + herald.t('{parked} parked, {endpoints} endpoints', {parked: w.parked || 0, endpoints: w.endpoints || 0})],
        [herald.t('ZeroMQ bridge backlog'), String(data.bridge_backlog || 0)],
        [herald.t('Archiver'), a.leader ? herald.t('at {position}, {lag} behind (writer {writer})', {
          position: a.position || start, lag: seconds(a.lag_seconds), writer: a.leader}) :
          herald.t('no archiver is writing')]
      ];
      this.$('#queues').html(_.map(items, function (item) {
        return '<div><dt>' + e(item[0]) + '</dt><dd>' + e(item[1]) + '</dd></div>';
      }).join(''));
    },

    renderOnline: function () {
      var online = this.model.get('presence') || [];
      this.$('#online-count').text('(' + online.length + ')');
      this.$('#online').html(_.map(online, function (p) {
        return '<li data-user="' + e(p.user) + '"><strong>' + e(p.user) + '</strong> <span class="since">' +
          herald.tHtml('since {time}', {time: herald.timeHtml(new Date(p.since))}) + (p.connections ? ' · ' +
          e(herald.tn('{n} connection', '{n} connections', p.connections)) : '') + '</span></li>';
      }).join(''));
      this.$('#online-empty').prop('hidden', online.length > 0);
    },

    renderSpark: function (data) {
      this.$('#spark-runs').html(_.map(data.spark, function (run) {
        var ok = run.topic === 'spark.job.succeeded';
        return '<li class="' + (ok ? 'alive' : 'missing') + '"><span class="health ' + (ok ? 'alive' : 'missing') +
          '">' + e(ok ? herald.t('Succeeded') : herald.t('Failed')) + '</span> ' + e(run.title) + ' <span class="since">' +
          herald.timeHtml(new Date(run.at * 1000)) + '</span></li>';
      }).join(''));
      this.$('#spark-empty').prop('hidden', data.spark.length > 0);
    }
  });
})(window.herald = window.herald || {});
