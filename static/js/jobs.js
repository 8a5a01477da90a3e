/*
 * The Jobs page (admins): live Spark job runs and the latest rollup.
 *
 * The page makes sure its user is subscribed to `spark.job` (jobs launched
 * from the button are private to whoever pressed it and arrive anyway).
 */
(function (herald) {
  'use strict';

  function covers(topics, wanted) {
    return _.some(topics, function (t) {
      return t === '*' || t === wanted || wanted.indexOf(t + '.') === 0;
    });
  }

  $(function () {
    var config = herald.pageConfig();
    herald.connectPage(config, {snapshot: 200});
    var jobs = new herald.SparkJobs();
    herald.jobs = jobs;
    herald.views = {
      connection: new herald.ConnectionView({el: '#connection'}),
      jobs: new herald.JobsView({el: '#jobs', collection: jobs, empty: $('#jobs-empty')}),
      rollup: new herald.RollupView({el: '#rollup', jobs: jobs})
    };

    herald.dispatcher.on('connected', function () {
      if (!covers(config.subscriptions, 'spark.job')) {
        herald.client.subscribe(['spark.job']).catch(function () {});
        config.subscriptions.push('spark.job');
        $('#subscribed-note').prop('hidden', false);
      }
    });

    $('#run-rollup').on('click', function () {
      var status = $('#run-status').text('starting…').removeClass('error');
      $.ajax({url: '/api/spark/rollup', method: 'POST', headers: {'X-CSRFToken': config.csrfToken}})
        .done(function (reply) { status.text('started ' + reply.correlation_id); })
        .fail(function (xhr) {
          status.text((xhr.responseJSON && xhr.responseJSON.error) || 'failed: HTTP ' + xhr.status)
            .addClass('error');
        });
    });

  });
})(window.herald = window.herald || {});
