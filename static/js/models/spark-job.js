/*
 * One Spark job run, built from its `spark.job.*` notifications. Its
 * `correlationId` is the run's; the model's id is that with a prefix, so
 * that no id a publisher chooses ("constructor", "__proto__") can be
 * mistaken for a property of Backbone's lookup table.
 *
 * Anyone may publish to `spark.job.*` (an admin by hand, another program),
 * so every field may be missing: what was not said stays unknown (null or
 * absent), never a made-up value. `percent` is null until a progress
 * notification gives one; the last notification's title and body are kept,
 * to say how a run ended when its data does not.
 */
(function (herald) {
  'use strict';

  var FINAL = {succeeded: true, failed: true};

  // A finite number from what a publisher sent, or undefined.
  function number(value) {
    var n = value === null || value === '' ? NaN : Number(value);
    return isFinite(n) ? n : undefined;
  }

  // A non-empty text from what a publisher sent, or undefined.
  function text(value) {
    return value === null || value === undefined || value === '' ? undefined : String(value);
  }

  herald.SparkJob = Backbone.Model.extend({
    idAttribute: 'key',
    defaults: {name: null, status: 'running', percent: null},

    // Take in one notification of this run; later stages win, percent never falls.
    absorb: function (envelope) {
      var stage = envelope.topic.split('.')[2];
      var data = _.isObject(envelope.data) ? envelope.data : {};
      var changes = {};
      if (text(data.job)) changes.name = text(data.job);
      if (!this.has('firstId') || herald.compareIds(envelope.id, this.get('firstId')) < 0) {
        changes.firstId = envelope.id;
      }
      if (stage === 'started') {
        changes.startedAt = envelope.ts;
      } else if (stage === 'progress' && !FINAL[this.get('status')]) {
        var percent = number(data.percent);
        if (percent !== undefined) {
          changes.percent = Math.max(this.get('percent') || 0, Math.min(100, Math.max(0, percent)));
        }
        if (number(data.tasks_total)) {
          changes.tasksCompleted = number(data.tasks_completed) || 0;
          changes.tasksTotal = number(data.tasks_total);
        }
      } else if (FINAL[stage]) {
        _.extend(changes, {status: stage, duration: number(data.duration_s),
                           endTitle: text(envelope.title), endBody: text(envelope.body)});
        if (stage === 'succeeded') {
          _.extend(changes, {percent: 100, rowsWritten: number(data.rows_written),
                             outputPath: text(data.output_path)});
        } else {
          _.extend(changes, {errorType: text(data.error_type), errorMessage: text(data.error_message)});
        }
      }
      this.set(changes);
    }
  });
  herald.SparkJob.keyOf = function (correlationId) {
    return 'run:' + correlationId;
  };
})(window.herald = window.herald || {});
