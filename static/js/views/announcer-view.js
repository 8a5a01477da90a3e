/*
 * One polite announcement per new notification, for screen readers (an
 * aria-live region), not the whole feed: "New warning: Disk nearly full".
 * At most one announcement a second (QUIET_MS): what arrives meanwhile is
 * announced together when that second is over, as a count ("3 new
 * notifications"), so a stream of them does not queue a sentence each in the
 * reader. A first one after a quiet second is said with the frame that draws its
 * row, not in a frame of its own (herald.withNextFrame).
 */
(function (herald) {
  'use strict';

  var QUIET_MS = 1000;

  herald.AnnouncerView = Backbone.View.extend({
    initialize: function () {
      this.pending = [];
      this.scheduled = false;
      this.lastAt = -Infinity;  // performance.now() of the last announcement
      this.listenTo(this.collection, 'arrived', this.collect);
    },

    // News only (the collection's `arrived`), not history loaded.
    collect: function (model) {
      this.pending.push(model);
      if (this.scheduled) return;
      this.scheduled = true;
      var announce = _.bind(this.announce, this), wait = this.lastAt + QUIET_MS - performance.now();
      if (wait > 0) setTimeout(announce, Math.ceil(wait)); else herald.withNextFrame(announce, 50);
    },

    announce: function () {
      var models = this.pending;
      this.pending = [];
      this.scheduled = false;
      if (!models.length) return;
      this.lastAt = performance.now();
      var text = models.length === 1 ?
        herald.t('New {severity}: {title}', {severity: herald.severityWord(models[0].get('severity')),
          title: models[0].get('title')}) :
        herald.tn('{n} new notification', '{n} new notifications', models.length);
      // The same words again are a new announcement too: a live region says only a change.
      if (this.el.textContent === text) text += '\u00a0';
      this.$el.text(text);
    }
  });
})(window.herald = window.herald || {});
