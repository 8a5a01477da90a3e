/*
 * Spark job runs, newest first, fed by the dispatcher's per-topic events
 * (`notification:spark.job.started` and the like) and by the page snapshot.
 */
(function (herald) {
  'use strict';

  var STAGES = ['started', 'progress', 'succeeded', 'failed'];

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

    absorb: function (envelope) {
      var id = envelope.correlation_id || (envelope.data && envelope.data.correlation_id);
      if (!id) return;
      var job = this.get(herald.SparkJob.keyOf(id)) ||
        this.add({key: herald.SparkJob.keyOf(id), correlationId: String(id), firstId: envelope.id});
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
