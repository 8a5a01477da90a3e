/*
 * "N posts on Chirp today": a plain-JS widget kept live by Herald.sync, no framework.
 *
 * The page renders today's posts (id and time) with the Herald cursor they are
 * as of; a Herald.Store holds them, Herald.sync adds, changes and removes
 * records from the posts.* events published after that cursor (versions are
 * not needed in what the page renders), and the count is drawn from the store.
 */
(function () {
  'use strict';

  var page = JSON.parse(document.getElementById('today-data').textContent);
  var posts = new Herald.Store(page.posts);
  var count = document.getElementById('today-count');

  function render() {
    // Naive UTC ISO times compare as strings.
    count.textContent = posts.values().filter(function (post) {
      return post.created_at >= page.since;
    }).length;
  }

  posts.on('update', render);
  Herald.sync(posts, 'posts', {since: page.cursor});
  window.chirpToday = posts;  // for the browser tests
})();
