/*
 * One polite announcement per new notification, for screen readers (an
 * aria-live region), not the whole feed: "New warning: Disk nearly full".
 * Several arriving within a second are announced together as a count.
 */
(function (herald) {
  'use strict';

  var QUIET_MS = 1000;

  herald.AnnouncerView = Backbone.View.extend({
    initialize: function () {
      this.pending = [];
      this.listenTo(this.collection, 'arrived', this.collect);
    },

    // News only (the collection's `arrived`), not history loaded.
    collect: function (model) {
      this.pending.push(model);
      if (!this.timer) this.timer = setTimeout(_.bind(this.announce, this), this.pending.length > 1 ? QUIET_MS : 50);
    },

    announce: function () {
      var models = this.pending;
      this.pending = [];
      this.timer = null;
      if (!models.length) return;
      var text = models.length === 1 ?
        herald.t('New {severity}: {title}', {severity: herald.severityWord(models[0].get('severity')),
          title: models[0].get('title')}) :
        herald.tn('{n} new notification', '{n} new notifications', models.length);
      this.$el.text(text);
    }
  });
})(window.herald = window.herald || {});
