/*
 * The email a digest would send now, shown as it will look: its subject,
 * its HTML part in `<iframe sandbox>` loaded from
 * `/api/digests/<id>/preview.html` (a document with its own policy, which
 * allows the email's inline styles: this page's does not, and an `srcdoc`
 * frame would inherit it), and its plain-text part folded away below.
 * With nothing collected yet it says when the next one is due, in the
 * reader's time zone. Closing it gives the focus back to the button that
 * opened it.
 */
(function (herald) {
  'use strict';

  herald.DigestPreviewView = Backbone.View.extend({
    events: {
      'click .close-preview': 'close'
    },

    initialize: function (options) {
      this.page = options.page;
      this.digest = null;
      this.opener = null;
    },

    show: function (digest, opener) {
      var view = this, base = '/api/digests/' + encodeURIComponent(digest.id);
      this.digest = digest;
      this.opener = opener || null;
      $.getJSON(base + '/preview')
        .done(function (reply) {
          if (view.digest === digest) view.render(digest, reply, base + '/preview.html');
        })
        .fail(function (xhr) {
          if (xhr.status === 404) view.page.gone(digest);
          else view.page.notice(herald.digestError(xhr), true);
        });
    },

    render: function (digest, reply, documentUrl) {
      var frame = this.$('.preview-html');
      this.$('#preview-heading').text(herald.t('Preview of the digest for {email}', {email: digest.get('email')}));
      if (reply.total) {
        this.$('.preview-subject').html('<strong>' + _.escape(herald.t('Subject:')) + '</strong> ' + _.escape(reply.subject));
        frame.prop('hidden', false).attr('src', documentUrl);
        this.$('.preview-text').text(reply.text);
      } else {
        this.$('.preview-subject').html(herald.tHtml('Nothing collected yet; the next digest is due {time}.',
          {time: herald.timeHtml(new Date(reply.window * 1000))}));
        frame.prop('hidden', true).removeAttr('src');
      }
      this.$('.preview-plain').prop('hidden', !reply.total);
      this.$el.prop('hidden', false).trigger('focus');
      return this;
    },

    // The digest is gone: so is its preview (the focus stays where it is).
    forget: function (digest) {
      if (this.digest === digest) this.hide();
    },

    close: function () {
      var opener = this.opener;
      this.hide();
      if (opener && $.contains(document, opener)) $(opener).trigger('focus');
      else this.page.$('#digests-heading').trigger('focus');
    },

    hide: function () {
      this.digest = null;
      this.opener = null;
      this.$el.prop('hidden', true);
      this.$('.preview-html').removeAttr('src');
    }
  });
})(window.herald = window.herald || {});
