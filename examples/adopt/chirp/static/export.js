/*
 * The export page: start the job without leaving the page, then follow it by the
 * DOM events herald.js dispatches for this user's job (herald:job.export.*).
 */
(function () {
  'use strict';

  var form = document.getElementById('export-form');
  var bar = document.getElementById('export-progress');
  var status = document.getElementById('export-status');
  var button = form.querySelector('button[type=submit]');

  function show(percent, text) {
    bar.value = percent;
    bar.textContent = Math.round(percent) + '%';
    status.textContent = text;
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    button.disabled = true;
    show(0, 'Queued…');
    fetch(form.action || location.href, {method: 'POST', body: new FormData(form),
                                         headers: {Accept: 'application/json'}})
      .then(function (response) {
        if (!response.ok) throw new Error('HTTP ' + response.status);
      })
      .catch(function () {
        button.disabled = false;
        show(0, 'The export could not be started: try again.');
      });
  });

  document.addEventListener('herald:job.export.started', function () {
    show(0, 'Started…');
  });
  document.addEventListener('herald:job.export.progress', function (event) {
    var percent = event.detail.data.percent;
    show(percent, 'Exporting: ' + Math.round(percent) + '%');
  });
  document.addEventListener('herald:job.export.succeeded', function (event) {
    var data = event.detail.data;
    show(100, 'Done: ' + data.rows + ' posts. ');
    var link = document.createElement('a');
    link.href = data.download;
    link.textContent = 'Download the CSV';
    status.appendChild(link);
    button.disabled = false;
  });
  document.addEventListener('herald:job.export.failed', function (event) {
    show(0, 'The export failed: ' + event.detail.body);
    button.disabled = false;
  });
})();
