/*
 * Spark job runs, newest first, fed by the dispatcher's per-topic events
 * (`notification:spark.job.started` and the like) and by the page snapshot.
 */
(function (herald) {
  'use strict';

  var STAGES = ['started', 'progress', 'succeeded', 'failed'];
  var FINAL = {succeeded: true, failed: true};

  herald.SparkJobs = Backbone.Collection.extend({
    model: herald.SparkJob,

    comparator: function (a, b) {
      return herald.compareIds(b.get('firstId'), a.get('firstId'));
    },

    initialize: function () {
      _.each(STAGES, function (stage) {
        this.listenTo(herald.dispatcher, 'notification:spark.job.' + stage, this.absorb);
      }, this);
      this.listenTo(herald.dispatcher, 'snapshot', this.absorbAll);
    },

    // A notification without a run id (published by hand) cannot be tied to a run:
    // how a run ended is shown as a run of its own; a start or progress is not (it
    // would stay "running" for ever).
    absorb: function (envelope) {
      var id = envelope.correlation_id || (envelope.data && envelope.data.correlation_id);
      var key = id ? herald.SparkJob.keyOf(id) : 'alone:' + envelope.id;
      if (!id && !FINAL[envelope.topic.split('.')[2]]) return;
      var job = this.get(key) ||
        this.add({key: key, correlationId: id ? String(id) : null, firstId: envelope.id});
      job.absorb(envelope);
      this.sort();
    },

    // A list of notifications (the page's REST snapshot): keep the spark.job.* ones.
    absorbAll: function (envelopes) {
      _.each(envelopes, function (envelope) {
        if (envelope.topic.indexOf('spark.job.') === 0) this.absorb(envelope);
      }, this);
    }
  });
})(window.herald = window.herald || {});
