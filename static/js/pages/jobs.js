/*
 * The Jobs page (admins): live Spark job runs and the latest rollup.
 *
 * The page makes sure its user is subscribed to `spark.job` (jobs launched
 * from the button are private to whoever pressed it and arrive anyway).
 */
(function (herald) {
  'use strict';

  $(function () {
    var config = herald.pageConfig();
    herald.connectPage(config, {snapshot: 200});
    var jobs = new herald.SparkJobs();
    herald.jobs = jobs;
    herald.views = {
      connection: new herald.ConnectionView({el: '#connection'}),
      jobs: new herald.JobsView({el: '#jobs', collection: jobs, empty: $('#jobs-empty')}),
      rollup: new herald.RollupView({el: '#rollup', jobs: jobs}),
      run: new herald.RunRollupView({el: '#run', jobs: jobs, csrfToken: config.csrfToken})
    };

    herald.dispatcher.on('connected', function () {
      // The note says so once it is true (the server answered): what is published
      // to spark.job from then on arrives here. A refusal is tried at the next connect.
      if (!herald.covers(config.subscriptions, 'spark.job')) {
        herald.client.subscribe(['spark.job']).then(function () {
          if (!herald.covers(config.subscriptions, 'spark.job')) config.subscriptions.push('spark.job');
          $('#subscribed-note').prop('hidden', false);
        }, function () {});
      }
    });
  });
})(window.herald = window.herald || {});
