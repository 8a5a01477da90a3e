/*
 * One Spark job run, built from its `spark.job.*` notifications. Its
 * `correlationId` is the run's; the model's id is that with a prefix, so
 * that no id a publisher chooses ("constructor", "__proto__") can be
 * mistaken for a property of Backbone's lookup table.
 */
(function (herald) {
  'use strict';

  var FINAL = {succeeded: true, failed: true};

  herald.SparkJob = Backbone.Model.extend({
    idAttribute: 'key',
    defaults: {name: 'job', status: 'running', percent: 0},

    // Take in one notification of this run; later stages win, percent never falls.
    absorb: function (envelope) {
      var stage = envelope.topic.split('.')[2];
      var data = envelope.data || {};
      var changes = {name: data.job || this.get('name')};
      if (!this.has('firstId') || herald.compareIds(envelope.id, this.get('firstId')) < 0) {
        changes.firstId = envelope.id;
      }
      if (stage === 'started') {
        changes.startedAt = envelope.ts;
      } else if (stage === 'progress' && !FINAL[this.get('status')]) {
        changes.percent = Math.max(this.get('percent'), data.percent || 0);
        if (data.tasks_total) {
          changes.tasksCompleted = data.tasks_completed;
          changes.tasksTotal = data.tasks_total;
        }
      } else if (stage === 'succeeded') {
        _.extend(changes, {status: 'succeeded', percent: 100, duration: data.duration_s,
                           rowsWritten: data.rows_written, outputPath: data.output_path});
      } else if (stage === 'failed') {
        _.extend(changes, {status: 'failed', duration: data.duration_s,
                           errorType: data.error_type, errorMessage: data.error_message});
      }
      this.set(changes);
    }
  });
  herald.SparkJob.keyOf = function (correlationId) {
    return 'run:' + correlationId;
  };
})(window.herald = window.herald || {});
