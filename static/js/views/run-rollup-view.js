/*
 * The "Run rollup now" button, and the run it started (or found running).
 *
 * One rollup runs at a time (the API answers 409 while one does), so the
 * button is disabled from the click until that run's last `spark.job.*`
 * notification (succeeded or failed) arrives, or the request fails; the
 * page asks `GET /api/spark/rollup/running` on load and on every reconnect,
 * so a run started elsewhere disables it too. While a run is tracked the
 * page asks again every so often: a run another admin started sends its
 * notifications to that admin only, and this is how its end is seen here.
 * Beside the button: the run's correlation id and progress, and any refusal.
 */
(function (herald) {
  'use strict';

  var FINAL = {succeeded: true, failed: true};
  var RECHECK_MS = 10000;

  function errorOf(xhr) {
    return (xhr.responseJSON && xhr.responseJSON.error) || herald.t('failed: HTTP {status}', {status: xhr.status});
  }

  // "Run <id> succeeded." or "Run <id> failed.", in the page's language.
  function ended(id, status) {
    return status === 'failed' ? herald.t('Run {id} failed.', {id: id}) : herald.t('Run {id} succeeded.', {id: id});
  }

  herald.RunRollupView = Backbone.View.extend({
    events: {
      'click #run-rollup': 'run'
    },

    initialize: function (options) {
      this.csrfToken = options.csrfToken;
      this.jobs = options.jobs;
      this.running = null;    // the correlation id of the run this page waits for
      this.starting = false;  // a POST is on its way
      this.timer = null;
      this.pending = 0;       // requests on their way: the view is aria-busy meanwhile
      this.presses = 0;       // an answer to a check made before the latest press is stale
      this.button = this.$('#run-rollup');
      this.listenTo(this.jobs, 'add change', this.follow);
      this.listenTo(herald.dispatcher, 'connected', this.check);
      this.check();
    },

    // Ask the server whether a rollup runs now.
    check: function () {
      var view = this, presses = this.presses;
      this.busy(1);
      herald.client.get('/api/spark/rollup/running').then(function (reply) {
        view.busy(-1);
        if (view.starting || presses !== view.presses) return;
        if (reply.correlation_id) view.track(reply.correlation_id);
        else if (view.running) view.finished();
      }, function () { view.busy(-1); });
    },

    run: function () {
      var view = this;
      if (this.running || this.starting) return;  // a second click of a double click
      this.starting = true;
      this.presses += 1;
      this.busy(1);
      this.disable(true);
      this.say(herald.t('Starting a rollup…'), '');
      $.ajax({url: '/api/spark/rollup', method: 'POST', headers: {'X-CSRFToken': this.csrfToken}})
        .always(function () {
          view.starting = false;
          view.busy(-1);
        })
        .done(function (reply) {
          view.track(reply.correlation_id);
        })
        .fail(function (xhr) {
          var other = xhr.status === 409 && xhr.responseJSON && xhr.responseJSON.correlation_id;
          if (other) {
            view.track(other);
          } else {
            view.disable(false);
            view.say('', '');
          }
          view.say(null, errorOf(xhr));
        });
    },

    // Wait for the run `id` to end; the button stays disabled meanwhile, unless
    // that run is already known to have ended (its lock is just being freed, or a
    // run that failed at once said so before the answer to its POST came back):
    // then it says how it ended, as when the end comes later.
    track: function (id) {
      var job = this.jobs.get(herald.SparkJob.keyOf(id));
      if (job && FINAL[job.get('status')]) {
        this.running = null;
        this.disable(false);
        this.say(ended(id, job.get('status')), undefined);
        return;
      }
      this.running = id;
      this.disable(true);
      this.say(this.runningText(job), undefined);
      this.schedule();
    },

    follow: function (job) {
      if (!this.running || job.get('correlationId') !== this.running) return;
      if (FINAL[job.get('status')]) this.finished(job);
      else this.say(this.runningText(job), undefined);
    },

    finished: function (job) {
      var id = this.running;
      this.running = null;
      window.clearTimeout(this.timer);
      this.timer = null;
      this.disable(false);
      this.say(job ? ended(id, job.get('status')) : herald.t('The rollup has ended.'), '');
    },

    schedule: function () {
      var view = this;
      if (this.timer) return;
      this.timer = window.setTimeout(function () {
        view.timer = null;
        if (!view.running) return;
        view.check();
        view.schedule();
      }, RECHECK_MS);
    },

    runningText: function (job) {
      var percent = job && job.get('percent');
      return herald.t('Running {id}', {id: this.running}) + (percent !== null && percent !== undefined ? ' · ' + percent + '%' : '');
    },

    busy: function (change) {
      this.pending += change;
      this.$el.attr('aria-busy', this.pending > 0 ? 'true' : null);
    },

    // The button, and where keyboard focus goes when it is disabled under it.
    disable: function (disabled) {
      var focused = this.button.is(':focus');
      this.button.prop('disabled', disabled);
      this.$el.attr('data-running', this.running || null);
      if (disabled && focused) this.$('#run-status').trigger('focus');
    },

    // The state beside the button, and a refusal or error: undefined keeps what shows.
    say: function (state, note) {
      var status = this.$('#run-status');
      if (!status.children().length) {
        status.append($('<span class="run-state">'), $('<span class="run-note error">'));
      }
      if (state !== null && state !== undefined) status.find('.run-state').text(state);
      if (note !== undefined) status.find('.run-note').text(note || '');
    }
  });
})(window.herald = window.herald || {});
