/*
 * One item of the feed: a group of notifications shown as one row.
 *
 * A group is the notifications of one run (the same `correlation_id`: a job's
 * started, progress, succeeded...) or else those with the same topic and
 * title; its newest one speaks for it. A run shows how far it got (a
 * <progress>, from the newest `data.percent` or `data.progress`) and how it
 * ended; any other group shows how many times it came.
 *
 * The row is dense: a checkbox, the unread dot, the severity's icon (its word
 * for screen readers: said once, never a colour alone), the title (the button
 * that opens it), one line of topic and "for you" for a private one, and the
 * time in a column of its own at the row's end (compact on a phone: "29s"). Its actions show on hover,
 * on focus and on the current row (CSS). Only the current row's controls are
 * in the Tab order (feed-view.js keeps it: a roving tabindex).
 *
 * Every text is escaped (`_.escape`); no inline style (the CSP forbids it).
 */
(function (herald) {
  'use strict';

  var e = _.escape;

  herald.SEVERITY_ICONS = {info: 'ℹ', success: '✓', warning: '⚠', error: '✖', critical: '‼'};
  herald.SEVERITY_WORDS = {info: herald.t('info'), success: herald.t('success'), warning: herald.t('warning'),
                           error: herald.t('error'), critical: herald.t('critical')};
  herald.severityWord = function (severity) { return herald.SEVERITY_WORDS[severity] || severity; };

  // What a group is, for drawing it and for the views that count or sort it.
  herald.describeGroup = function (group, collection) {
    var newest = group[0], json = newest.toJSON();
    var read = _.every(group, function (m) { return m.get('read'); });
    var run = Boolean(json.correlation_id) && group.length > 1;
    var percent = null, outcome = null;
    if (json.correlation_id) {
      outcome = herald.outcomeOf(json);
      var measured = _.find(group, function (m) { return herald.percentOf(m.get('data')) !== null; });
      percent = measured ? herald.percentOf(measured.get('data')) : null;
      if (outcome === 'succeeded') percent = 100;
    }
    return {
      newest: newest, json: json, read: read, run: run || (json.correlation_id && percent !== null),
      percent: percent, outcome: outcome, count: group.length,
      mine: _.some(group, function (m) { return Boolean(m.get('user')); }),
      activity: _.every(group, function (m) { return herald.isActivity(m.attributes); }),
      unseen: !read && !collection.isSeen(newest.id)
    };
  };

  function actionsHtml(view, read) {
    var html = '<button type="button" class="toggle-read" tabindex="-1">' +
      (read ? herald.t('Mark unread') : herald.t('Mark read')) + '</button>';
    if (view === 'archived') {
      return html + '<button type="button" class="unarchive" tabindex="-1">' + herald.t('Move to inbox') + '</button>';
    }
    if (view === 'snoozed') {
      return html + '<button type="button" class="unsnooze" tabindex="-1">' + herald.t('Wake now') + '</button>';
    }
    return html + '<button type="button" class="archive" tabindex="-1">' + herald.t('Archive') + '</button>' +
      herald.snoozeLater() +
      '<button type="button" class="mute" tabindex="-1">' + herald.t('Mute topic') + '</button>';
  }

  // After the title: how far a run got and how many updates, or how many times it came.
  // A failed run whose severity says error already (its ✖) says "failed" to screen readers only.
  function countHtml(d) {
    if (d.run) {
      var state = d.outcome === 'failed' ? herald.t('failed') : d.outcome === 'succeeded' ? herald.t('done') :
        (d.percent !== null ? Math.round(d.percent) + '%' : herald.t('running'));
      var told = d.outcome === 'failed' && (d.json.severity === 'error' || d.json.severity === 'critical');
      return ' <span class="run-state run-' + e(d.outcome || 'running') + (told ? ' sr-only' : '') + '">' + e(state) + '</span>' +
        (d.count > 1 ? ' <span class="count">' + e(herald.tn('{n} update', '{n} updates', d.count)) + '</span>' : '');
    }
    return d.count > 1 ? ' <span class="count"><span aria-hidden="true">×' + d.count + '</span>' +
      '<span class="sr-only">, ' + e(herald.tn('{n} time', '{n} times', d.count)) + '</span></span>' : '';
  }

  // The checkbox's name: what the row is.
  function label(d) {
    return d.json.title + (d.count > 1 ? ', ' + (d.run ? herald.tn('{n} update', '{n} updates', d.count) :
      herald.tn('{n} time', '{n} times', d.count)) : '');
  }

  // Rows parsed once per shape (their markup less the row's own texts), and cloned for
  // each row: parsing a row's HTML was most of drawing one, and a live notification
  // waited for it. Few shapes recur (severity, read, view, count...); a page that makes
  // more than SHAPES_MOST starts again.
  var shapes = new Map(), SHAPES_MOST = 64;
  function cloneOf(html) {
    var shape = shapes.get(html);
    if (!shape) {
      if (shapes.size >= SHAPES_MOST) shapes.clear();
      shape = document.createElement('template');
      shape.innerHTML = html;
      shapes.set(html, shape);
    }
    return shape.content.firstChild.cloneNode(true);
  }

  // The <li> of a group; `options`: {view, selected, pinned, until}. The shape's markup
  // escapes every text it holds (`e`); the row's own texts go in as text after.
  herald.drawFeedItem = function (group, key, d, options) {
    var n = d.json;
    var item = cloneOf(
      '<li class="notification severity-' + e(n.severity || 'info') + (d.read ? '' : ' unread') +
        (d.unseen ? ' unseen' : '') + (options.pinned ? ' pinned' : '') + (options.selected ? ' selected' : '') +
        (d.mine ? ' mine' : '') + (d.run ? ' run run-' + e(d.outcome || 'running') : '') + '">' +
      '<input type="checkbox" class="select" tabindex="-1"' + (options.selected ? ' checked' : '') + '>' +
      '<span class="dot" aria-hidden="true"></span>' +
      '<div class="main">' +
        '<button type="button" class="open" tabindex="-1">' +
          '<span class="sev-icon" aria-hidden="true">' + e(herald.SEVERITY_ICONS[n.severity] || '') + '</span>' +
          (d.read ? '' : '<span class="sr-only">' + e(herald.t('Unread:')) + ' </span>') +
          '<span class="title"></span>' + countHtml(d) +
        '</button>' +
        '<div class="meta">' +
          (options.pinned ? '<span class="pin">' + e(herald.t('Pinned')) + '</span>' : '') +
          (n.severity === 'info' ? '' : '<span class="severity sr-only">' + e(herald.severityWord(n.severity)) + '</span>') +
          (d.mine ? '<span class="for-you">' + e(herald.t('For you')) + '</span>' : '') +
          '<span class="topic"></span>' +
          (options.until ? '<span class="until"></span>' : '') +
        '</div>' +
        (d.run && d.percent !== null ? '<progress max="100" aria-label="' + e(herald.t('Progress')) + '"></progress>' : '') +
        (n.body ? '<div class="body"></div>' : '') +
      '</div>' +
      '<time class="when"><span class="when-words"></span><span class="when-short" aria-hidden="true"></span></time>' +
      '<div class="actions" role="group" aria-label="' + e(herald.t('Actions')) + '">' + actionsHtml(options.view, d.read) + '</div>' +
      '</li>');
    item.setAttribute('data-id', d.newest.id);
    item.setAttribute('data-topic', n.topic);
    item.setAttribute('data-key', key);
    item.firstChild.setAttribute('aria-label', herald.t('Select: {title}', {title: label(d)}));
    var main = item.children[2];
    main.querySelector('.title').textContent = n.title;
    main.querySelector('.topic').textContent = n.topic;
    if (options.until) {
      main.querySelector('.until').textContent = herald.t('back {time}', {time: herald.exactTime(new Date(options.until))});
    }
    if (d.run && d.percent !== null) main.querySelector('progress').value = Math.round(d.percent);
    if (n.body) main.querySelector('.body').textContent = n.body;
    var time = item.children[3];
    time.setAttribute('datetime', n.ts);
    herald.drawRowTime(time, d.newest);
    time.title = d.newest.exactTime();
    return item;
  };

  // A row's time, in words ("29 sec. ago") and compact ("29s"): the CSS shows the compact
  // form on a phone, where the words stay for screen readers (herald.css, .when-words),
  // and the exact time is the <time>'s title and datetime. Only what changed is written;
  // `dueAt` on the <time> says when its words may change next (feed-view.js redraws
  // only the rows' times that are due).
  herald.drawRowTime = function (time, model, now) {
    var at = model.time().getTime(), words = model.relativeTime(now), compact = herald.compactWords(at, now);
    var shown = time.firstChild && time.firstChild.className === 'when-words' ? time.children : null;
    if (!shown) {
      time.innerHTML = '<span class="when-words"></span><span class="when-short" aria-hidden="true"></span>';
      shown = time.children;
    }
    if (shown[0].textContent !== words) shown[0].textContent = words;
    if (shown[1].textContent !== compact) shown[1].textContent = compact;
    time.dueAt = herald.relativeDue(at, now);  // the words stay until then
  };
})(window.herald = window.herald || {});
