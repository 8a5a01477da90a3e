/*
 * The Users page (admins): the page itself is plain HTML forms (app/web/pages/users.py);
 * this adds what a script can. Times in the reader's zone (the server writes UTC);
 * the password field only when "A password I set now" is chosen; a Copy button for
 * a new invite link; and, after adding someone or withdrawing an invite, the focus on
 * what the page answered (the new link, what was wrong, what was withdrawn), so a
 * keyboard or screen-reader user hears it.
 */
(function (herald) {
  'use strict';

  $(function () {
    var config = herald.pageConfig();
    herald.connectPage(config, {snapshot: 1});  // for the connection indicator
    herald.views = {connection: new herald.ConnectionView({el: '#connection'})};

    $('time.local-time').each(function () {
      var iso = this.getAttribute('datetime');
      $(this).replaceWith(herald.timeHtml(iso));
    });

    var form = $('#add-user'), password = form.find('.password-field');
    function showPassword() {
      var byPassword = form.find('input[name=way]:checked').val() === 'password';
      password.prop('hidden', !byPassword);
      password.find('input').prop('required', byPassword);
    }
    form.on('change', 'input[name=way]', showPassword);
    showPassword();

    var link = $('#invite-link'), status = $('#user-added .copy-status');
    if (link.length && navigator.clipboard && navigator.clipboard.writeText) {
      $('#user-added .copy-link').prop('hidden', false).on('click', function () {
        navigator.clipboard.writeText(link.val()).then(function () {
          status.text(herald.t('Copied.'));
        }, function () {
          link.trigger('focus').trigger('select');
          status.text(herald.t('Selected: press Ctrl+C (⌘C) to copy it.'));
        });
      });
    }

    if ($('#add-user-error').length) {
      form.find('input[name=name]').trigger('focus');
    } else if (link.length) {
      link.trigger('focus').trigger('select');
    } else if ($('#user-added').length) {
      $('#user-added').trigger('focus');
    } else if ($('#invite-withdrawn').length) {
      $('#invite-withdrawn').trigger('focus');
    }
  });
})(window.herald = window.herald || {});
