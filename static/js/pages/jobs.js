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
      if (!herald.covers(config.subscriptions, 'spark.job')) {
        herald.client.subscribe(['spark.job']).catch(function () {});
        config.subscriptions.push('spark.job');
        $('#subscribed-note').prop('hidden', false);
      }
    });
  });
})(window.herald = window.herald || {});
