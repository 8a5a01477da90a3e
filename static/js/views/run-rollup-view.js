/*
 * The "Run rollup now" button and what came of pressing it.
 */
(function (herald) {
  'use strict';

  herald.RunRollupView = Backbone.View.extend({
    events: {
      'click #run-rollup': 'run'
    },

    initialize: function (options) {
      this.csrfToken = options.csrfToken;
    },

    run: function () {
      var status = this.$('#run-status').text('starting…').removeClass('error');
      $.ajax({url: '/api/spark/rollup', method: 'POST', headers: {'X-CSRFToken': this.csrfToken}})
        .done(function (reply) { status.text('started ' + reply.correlation_id); })
        .fail(function (xhr) {
          status.text((xhr.responseJSON && xhr.responseJSON.error) || 'failed: HTTP ' + xhr.status)
            .addClass('error');
        });
    }
  });
})(window.herald = window.herald || {});
