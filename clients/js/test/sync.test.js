// Herald.sync(collection, prefix): a Backbone collection kept live by
// `<prefix>.created|updated|deleted` notifications, stale versions ignored;
// live once a subscription covering the prefix is acknowledged.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const Backbone = require('backbone');
const {loadHerald, flush, connected} = require('./harness');

// A connected client, as the page has it (Backbone on the page: its dispatcher
// is a Backbone.Events).
async function live(options) {
  const env = loadHerald({Backbone});
  const {client, socket} = await connected(env, options);
  socket.accept();
  await answer(socket, 'subscribe', []);
  let seq = 0;
  // Deliver a notification on `topic` with `data`, as the server would.
  const send = (topic, data) => socket.fire('notification', {id: '1000-' + (seq++), topic, data});
  return {env, client, socket, send};
}

// Acknowledge the oldest unanswered `event` request (made by now: requests wait
// on a promise of the socket) with the subscription list `topics`.
async function answer(socket, event, topics) {
  await flush();
  const request = socket.emitted.find((r) => r.event === event && !r.answered);
  assert.ok(request, 'the client asked to ' + event);
  request.answered = true;
  request.ack(false, {ok: true, topics});
  return request;
}

async function isReady(handle) {
  let ready = false;
  handle.ready.then(() => { ready = true; });
  await flush();
  return ready;
}

test('Herald.sync needs a connected client first', () => {
  const {Herald} = loadHerald();
  assert.throws(() => Herald.sync(new Backbone.Collection(), 'board'), /call Herald.connect first/);
});

test('a subscription prefix covers topics on segment boundaries; * covers all', async () => {
  const cases = [
    [['spark'], 'spark.job.x', true],
    [['spark.job.x'], 'spark.job.x', true],
    [['*'], 'anything.at.all', true],
    [['ops', 'spark.job'], 'spark.job.x', true],
    [['spark'], 'sparkle', false],
    [['spark.job'], 'spark.jobs', false],
    [['spark.job.x'], 'spark', false],
    [['sparkle'], 'spark', false],
    [[], 'spark', false]
  ];
  for (const [topics, prefix, expected] of cases) {
    const {env, socket} = await live();
    const handle = env.Herald.sync(new Backbone.Collection(), prefix);
    const request = await answer(socket, 'subscribe', topics);
    assert.deepEqual(request.payload, {topics: [prefix]}, 'the prefix is subscribed at once');
    assert.equal(await isReady(handle), expected, JSON.stringify(topics) + ' covers ' + prefix);
  }
});

test('with fetch, the collection is fetched once the subscription is live, and after a reset', async () => {
  const {env, socket} = await live();
  const collection = new Backbone.Collection();
  let fetches = 0;
  collection.fetch = () => { fetches++; };
  const handle = env.Herald.sync(collection, 'board.record', {fetch: true});
  assert.equal(fetches, 0);
  await answer(socket, 'subscribe', ['board']);
  assert.equal(await isReady(handle), true);
  assert.equal(fetches, 1);
  env.Herald.current.subscribe(['ops']);
  await answer(socket, 'subscribe', ['board', 'ops']);  // live already: no second fetch
  assert.equal(fetches, 1);
  socket.fire('reset');
  socket.fire('replayed', {recovered: false, count: 0, last_id: null});
  assert.equal(fetches, 2);
});

test('the prefix joins the topics subscribed on every connect', async () => {
  const env = loadHerald({Backbone});
  const {socket} = await connected(env, {topics: ['ops']});
  env.Herald.sync(new Backbone.Collection(), 'board');
  socket.accept();
  await flush();
  assert.deepEqual(socket.emitted[0].payload, {topics: ['ops', 'board']});
});

test('an update or creation with a version older than or equal to the model is ignored', async () => {
  const {env, send} = await live();
  const records = new Backbone.Collection([{id: 1, version: 3, name: 'three'}]);
  env.Herald.sync(records, 'board');
  send('board.updated', {id: 1, version: 2, name: 'two'});
  assert.equal(records.get(1).get('name'), 'three');
  send('board.updated', {id: 1, version: 3, name: 'three again'});
  assert.equal(records.get(1).get('name'), 'three');
  send('board.created', {id: 1, version: 3, name: 'created again'});
  assert.equal(records.get(1).get('name'), 'three');
  send('board.updated', {id: 1, version: 4, name: 'four'});
  assert.equal(records.get(1).get('name'), 'four');
  send('board.created', {id: 2, version: 1, name: 'new'});
  assert.deepEqual(records.pluck('id'), [1, 2]);
});

test('without versions on both sides, every change applies', async () => {
  const {env, send} = await live();
  const records = new Backbone.Collection([{id: 1, name: 'a'}, {id: 2, version: 9, name: 'b'}]);
  env.Herald.sync(records, 'board');
  send('board.updated', {id: 1, version: 1, name: 'a1'});
  send('board.updated', {id: 2, name: 'b unversioned'});
  assert.deepEqual(records.pluck('name'), ['a1', 'b unversioned']);
});

test('a deletion older than the model is ignored; a stale update cannot revive a deleted record', async () => {
  const {env, send} = await live();
  const records = new Backbone.Collection([{id: 1, version: 4}]);
  env.Herald.sync(records, 'board');
  send('board.deleted', {id: 1, version: 3});
  assert.equal(records.length, 1);
  send('board.deleted', {id: 1, version: 4});
  assert.equal(records.length, 0, 'a deletion at the same version applies');
  send('board.updated', {id: 1, version: 4});
  send('board.created', {id: 1, version: 3});
  assert.equal(records.length, 0);
  send('board.created', {id: 1, version: 5, name: 'back'});
  assert.equal(records.get(1).get('name'), 'back');
});

test('the version attribute and the id attribute are the ones given', async () => {
  const {env, send} = await live();
  const Model = Backbone.Model.extend({idAttribute: 'key'});
  const records = new (Backbone.Collection.extend({model: Model}))([{key: 'k', rev: 2, name: 'two'}]);
  env.Herald.sync(records, 'board', {version: 'rev'});
  send('board.updated', {key: 'k', rev: 1, name: 'one', version: 99});
  assert.equal(records.get('k').get('name'), 'two');
  send('board.updated', {key: 'k', rev: 3, name: 'three'});
  assert.equal(records.get('k').get('name'), 'three');
});

test('only <prefix>.created|updated|deleted with a record as data are applied', async () => {
  const {env, send} = await live();
  const records = new Backbone.Collection();
  env.Herald.sync(records, 'board');
  send('boardroom.created', {id: 1});
  send('board.card.created', {id: 2});
  send('board.renamed', {id: 3});
  send('board.created', 'not a record');
  send('board.created', {name: 'no id'});
  assert.equal(records.length, 0);
  send('board.created', {id: 4});
  assert.deepEqual(records.pluck('id'), [4]);
});

test('what arrives during a fetch is applied after it, against what the fetch brought', async () => {
  const {env, send} = await live();
  const records = new Backbone.Collection();
  env.Herald.sync(records, 'board');
  records.trigger('request', records);
  send('board.updated', {id: 1, version: 5, name: 'five'});
  send('board.created', {id: 2, version: 1, name: 'new'});
  assert.equal(records.length, 0, 'held while the fetch is on its way');
  records.reset([{id: 1, version: 6, name: 'six'}]);
  records.trigger('sync', records);
  assert.deepEqual(records.pluck('name'), ['six', 'new']);
});

test('stop() ends the syncing', async () => {
  const {env, send} = await live();
  const records = new Backbone.Collection();
  const handle = env.Herald.sync(records, 'board');
  send('board.created', {id: 1});
  handle.stop();
  send('board.created', {id: 2});
  assert.deepEqual(records.pluck('id'), [1]);
});

// ---- {since: cursor}: catching up over REST on what the rendered page missed ----

const SINCE = '1700000000000-0';

// A fetch the test answers by hand: each request waits for answer(reply), where
// reply is a JSON body (200), a status (an `error` body), or 'down' (no answer).
function manualFetch() {
  const fetch = (url, init) => new Promise((resolve, reject) => {
    const parsed = new URL(url);
    fetch.requests.push({
      url: parsed,
      path: parsed.pathname,
      params: Object.fromEntries(parsed.searchParams),
      token: init.headers.Authorization,
      answer(reply) {
        if (reply === 'down') return reject(new TypeError('Failed to fetch'));
        const status = typeof reply === 'number' ? reply : 200;
        const body = status === 200 ? reply : {error: 'the server says ' + status};
        resolve({status, ok: status < 400, json: () => Promise.resolve(body)});
      }
    });
  });
  fetch.requests = [];
  return fetch;
}

// A connected client whose REST reads the test answers (env.fetch.requests).
async function liveWithRest(options) {
  const fetch = manualFetch();
  const env = loadHerald({Backbone, fetch});
  const {client, socket} = await connected(env, options);
  socket.accept();
  await answer(socket, 'subscribe', []);
  return {env, client, socket, fetch};
}

// A `data` notification as the server keeps it (REST) and sends it (live).
function change(ms, topic, data) {
  return {id: ms + '-0', topic, title: topic, kind: 'data', data, ts: '2023-11-14T22:13:20.000Z'};
}

// A page of /api/notifications: {notifications, last_id, next_before}.
function page(notifications) {
  const last = notifications.length ? notifications[notifications.length - 1].id : null;
  return {notifications, last_id: last, next_before: null};
}

// Every `sync:error` the dispatcher triggers.
function syncErrors(client) {
  const errors = [];
  client.on('sync:error', (error, details) => errors.push({error, details}));
  return errors;
}

test('since: a change published between render and subscribe is read over REST and applied', async () => {
  const {env, socket, fetch} = await liveWithRest();
  const records = new Backbone.Collection([{id: 1, version: 1, name: 'rendered'}]);
  env.Herald.sync(records, 'board.record', {since: SINCE});
  await flush();
  assert.equal(fetch.requests.length, 0, 'nothing is read before the subscription is live');
  await answer(socket, 'subscribe', ['board']);
  await flush();
  assert.equal(fetch.requests.length, 1);
  const request = fetch.requests[0];
  assert.equal(request.url.origin + request.path, 'https://app.example/api/notifications');
  assert.deepEqual(request.params, {after: SINCE, topic: 'board.record', kind: 'all', limit: '1000'});
  assert.equal(request.token, 'Bearer T');
  request.answer(page([
    change(1700000000001, 'board.record.updated', {id: 1, version: 2, name: 'changed meanwhile'}),
    change(1700000000002, 'board.record.created', {id: 2, version: 1, name: 'new meanwhile'}),
    change(1700000000003, 'board.record.renamed', {id: 3, version: 1}),  // not a sync action
    {id: '1700000000004-0', topic: 'board.record.created', title: 'an alert', kind: 'alert'}
  ]));
  await flush();
  assert.deepEqual(records.pluck('name'), ['changed meanwhile', 'new meanwhile']);
  assert.equal(fetch.requests.length, 1, 'a page that was not full is the last');
});

test('since: a full page is followed by a read from its last_id, until a page is not full', async () => {
  const {env, socket, fetch} = await liveWithRest();
  const records = new Backbone.Collection();
  env.Herald.sync(records, 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  const first = [];
  for (let i = 1; i <= 1000; i++) first.push(change(1700000000000 + i, 'board.created', {id: i, version: 1}));
  fetch.requests[0].answer(page(first));
  await flush();
  assert.equal(records.length, 1000);
  assert.equal(fetch.requests.length, 2);
  assert.deepEqual(fetch.requests[1].params,
                   {after: '1700000001000-0', topic: 'board', kind: 'all', limit: '1000'});
  fetch.requests[1].answer(page([change(1700000002000, 'board.deleted', {id: 7, version: 1})]));
  await flush();
  assert.equal(records.length, 999);
  assert.equal(records.get(7), undefined);
  assert.equal(fetch.requests.length, 2);
});

test('since: the catch-up reads at most 20 full pages, then falls back (sync:error)', async () => {
  const {env, client, socket, fetch} = await liveWithRest();
  const errors = syncErrors(client);
  const handle = env.Herald.sync(new Backbone.Collection(), 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  let ms = 1700000000000;
  for (let n = 0; n < 20; n++) {
    await flush();
    assert.equal(fetch.requests.length, n + 1);
    const full = [];
    for (let i = 0; i < 1000; i++) full.push(change(++ms, 'board.created', {id: ms, version: 1}));
    fetch.requests[n].answer(page(full));
  }
  await flush();
  assert.equal(fetch.requests.length, 20, 'no 21st page');
  assert.equal(errors.length, 1);
  assert.match(errors[0].error.message, /more than 20000 changes/);
  assert.equal(await isReady(handle), true);
});

test('since: a live change newer than the catch-up\'s keeps; a live deletion is not undone by an older update', async () => {
  const {env, socket, fetch} = await liveWithRest();
  const records = new Backbone.Collection([{id: 1, version: 3, name: 'three'}, {id: 2, version: 1, name: 'two'}]);
  env.Herald.sync(records, 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  // Live first, while the catch-up read is on its way.
  socket.fire('notification', change(1700000000500, 'board.updated', {id: 1, version: 5, name: 'five'}));
  socket.fire('notification', change(1700000000501, 'board.deleted', {id: 2, version: 3}));
  assert.deepEqual(records.pluck('name'), ['five'], 'live changes apply as they come');
  fetch.requests[0].answer(page([
    change(1700000000100, 'board.updated', {id: 1, version: 4, name: 'four'}),
    change(1700000000101, 'board.updated', {id: 2, version: 2, name: 'two again'}),
    change(1700000000500, 'board.updated', {id: 1, version: 5, name: 'five'}),
    change(1700000000501, 'board.deleted', {id: 2, version: 3})
  ]));
  await flush();
  assert.deepEqual(records.pluck('name'), ['five']);
  assert.equal(records.get(2), undefined, 'the deleted record stays deleted');
});

test('since: without versions, a live change is not overwritten by an older one from the catch-up', async () => {
  const {env, socket, fetch} = await liveWithRest();
  const records = new Backbone.Collection([{id: 1, name: 'rendered'}]);
  env.Herald.sync(records, 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  socket.fire('notification', change(1700000000500, 'board.updated', {id: 1, name: 'live'}));
  fetch.requests[0].answer(page([
    change(1700000000100, 'board.updated', {id: 1, name: 'older'}),
    change(1700000000200, 'board.created', {id: 2, name: 'missed'})
  ]));
  await flush();
  assert.deepEqual(records.pluck('name'), ['live', 'missed']);
  // Once caught up, live changes apply as always.
  socket.fire('notification', change(1700000000600, 'board.updated', {id: 1, name: 'later'}));
  assert.equal(records.get(1).get('name'), 'later');
});

test('since: ready resolves once the catch-up read is done, not at the subscription', async () => {
  const {env, socket, fetch} = await liveWithRest();
  const records = new Backbone.Collection();
  const handle = env.Herald.sync(records, 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  assert.equal(await isReady(handle), false, 'the read is still on its way');
  fetch.requests[0].answer(page([change(1700000000001, 'board.created', {id: 1, version: 1})]));
  let sizeWhenReady = null;
  handle.ready.then(() => { sizeWhenReady = records.length; });
  await flush();
  assert.equal(sizeWhenReady, 1, 'the caught-up records are in the collection when ready resolves');
});

test('since: a failed catch-up read is tried again after a backoff', async () => {
  const {env, client, socket, fetch} = await liveWithRest();
  const errors = syncErrors(client);
  const records = new Backbone.Collection();
  const handle = env.Herald.sync(records, 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  fetch.requests[0].answer('down');
  await flush();
  assert.equal(env.timers.pending().length, 1, 'a retry waits');
  assert.equal(fetch.requests.length, 1);
  env.timers.runAll();
  await flush();
  assert.equal(fetch.requests.length, 2);
  assert.deepEqual(fetch.requests[1].params, fetch.requests[0].params, 'the same read again');
  fetch.requests[1].answer(503);
  await flush();
  assert.equal(await isReady(handle), false);
  env.timers.runAll();
  await flush();
  fetch.requests[2].answer(page([change(1700000000001, 'board.created', {id: 1, version: 1})]));
  await flush();
  assert.deepEqual(records.pluck('id'), [1]);
  assert.equal(await isReady(handle), true);
  assert.equal(errors.length, 0);
});

// Fail every read of the catch-up (a first read, then its retries); the number of reads.
async function failEveryRead(env, fetch, reply) {
  for (;;) {
    await flush();
    const open = fetch.requests.filter((r) => !r.answered);
    if (open.length) {
      open[0].answered = true;
      open[0].answer(reply);
      continue;
    }
    if (!env.timers.pending().length) return fetch.requests.length;
    env.timers.runAll();
  }
}

test('since: a catch-up that keeps failing triggers sync:error (without fetch)', async () => {
  const {env, client, socket, fetch} = await liveWithRest();
  const errors = syncErrors(client);
  const records = new Backbone.Collection();
  records.fetch = () => assert.fail('not fetched without {fetch: true}');
  const handle = env.Herald.sync(records, 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  assert.equal(await failEveryRead(env, fetch, 503), 5, 'one read and four retries');
  assert.equal(errors.length, 1);
  assert.equal(errors[0].error.status, 503);
  assert.equal(errors[0].error.retryable, true);
  assert.equal(errors[0].error.prefix, 'board');
  assert.equal(errors[0].details.prefix, 'board');
  assert.equal(errors[0].details.collection, records);
  assert.equal(await isReady(handle), true);
});

test('since: a catch-up that keeps failing refetches the collection (with fetch)', async () => {
  const {env, client, socket, fetch} = await liveWithRest();
  const errors = syncErrors(client);
  const records = new Backbone.Collection();
  let fetches = 0;
  records.fetch = () => { fetches++; };
  const handle = env.Herald.sync(records, 'board', {since: SINCE, fetch: true});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  assert.equal(fetches, 0, 'since first: no full fetch while the catch-up may work');
  assert.equal(await failEveryRead(env, fetch, 'down'), 5);
  assert.equal(fetches, 1);
  assert.equal(errors.length, 0);
  assert.equal(await isReady(handle), true);
});

test('since: a refusal that will not pass (400) is not retried', async () => {
  const {env, client, socket, fetch} = await liveWithRest();
  const errors = syncErrors(client);
  env.Herald.sync(new Backbone.Collection(), 'board', {since: 'nonsense'});
  await answer(socket, 'subscribe', ['board']);
  assert.equal(await failEveryRead(env, fetch, 400), 1);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].error.status, 400);
});

test('since with fetch: caught up, no full fetch; a reset still refetches', async () => {
  const {env, socket, fetch} = await liveWithRest();
  const records = new Backbone.Collection();
  let fetches = 0;
  records.fetch = () => { fetches++; };
  const handle = env.Herald.sync(records, 'board', {since: SINCE, fetch: true});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  fetch.requests[0].answer(page([]));
  assert.equal(await isReady(handle), true);
  assert.equal(fetches, 0);
  socket.fire('reset');
  socket.fire('replayed', {recovered: false, count: 0, last_id: null});
  assert.equal(fetches, 1);
  assert.equal(fetch.requests.length, 1, 'a reset does not catch up again over REST');
});

test('since: stop() during a retry\'s wait ends the catch-up and resolves ready', async () => {
  const {env, client, socket, fetch} = await liveWithRest();
  const errors = syncErrors(client);
  const records = new Backbone.Collection();
  const handle = env.Herald.sync(records, 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  fetch.requests[0].answer('down');
  await flush();
  handle.stop();
  assert.equal(env.timers.pending().length, 0, 'the retry is called off');
  assert.equal(await isReady(handle), true);
  assert.equal(fetch.requests.length, 1);
  assert.equal(errors.length, 0);
});

test('no since (null or left out): no REST read at all; a since: one read', async () => {
  for (const options of [{}, {since: null}, {since: undefined}, {fetch: true, since: null}]) {
    const {env, socket, fetch} = await liveWithRest();
    const records = new Backbone.Collection();
    records.fetch = () => {};
    const handle = env.Herald.sync(records, 'board', options);
    await answer(socket, 'subscribe', ['board']);
    assert.equal(await isReady(handle), true, 'ready at the subscription, as before');
    assert.equal(fetch.requests.length, 0, JSON.stringify(options));
  }
  const {env, socket, fetch} = await liveWithRest();
  env.Herald.sync(new Backbone.Collection(), 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  assert.equal(fetch.requests.length, 1);
});

// With a sharded history the page's `since` and REST's `last_id` are per-shard
// cursors ("<id0>_<id1>_<id2>"), and ids carry their shard ("<ms>-<seq>-<k>").
test('since: a sharded cursor is read on from each page\'s last_id while it moves', async () => {
  const {env, socket, fetch} = await liveWithRest();
  const records = new Backbone.Collection();
  const since = '1700000000000-0_0-0_1700000000000-0';
  env.Herald.sync(records, 'board', {since});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  assert.deepEqual(fetch.requests[0].params, {after: since, topic: 'board', kind: 'all', limit: '1000'});
  const full = [];
  for (let i = 1; i <= 1000; i++) {
    full.push({...change(1700000000000 + i, 'board.created', {id: i, version: 1}), id: (1700000000000 + i) + '-0-2'});
  }
  // The cursor moved in shard 2 only: no single id of it compares past `since` by its first part.
  const moved = '1700000000000-0_0-0_1700000001000-0';
  fetch.requests[0].answer({notifications: full, last_id: moved, next_before: null});
  await flush();
  assert.equal(records.length, 1000);
  assert.equal(fetch.requests.length, 2, 'the cursor moved: read on');
  assert.deepEqual(fetch.requests[1].params, {after: moved, topic: 'board', kind: 'all', limit: '1000'});
  // A full page that leaves the cursor where it was ends the catch-up (no endless loop).
  fetch.requests[1].answer({notifications: full, last_id: moved, next_before: null});
  await flush();
  assert.equal(fetch.requests.length, 2);
});

test('since: a single id read on from a sharded last_id (another form: moved)', async () => {
  const {env, socket, fetch} = await liveWithRest();
  env.Herald.sync(new Backbone.Collection(), 'board', {since: SINCE});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  const full = [];
  for (let i = 1; i <= 1000; i++) full.push(change(1700000000000 + i, 'board.created', {id: i, version: 1}));
  fetch.requests[0].answer({notifications: full, last_id: '1700000001000-0_0-0', next_before: null});
  await flush();
  assert.equal(fetch.requests.length, 2);
  assert.equal(fetch.requests[1].params.after, '1700000001000-0_0-0');
});

test('since: with sharded ids, a catch-up change older than a live one is not applied', async () => {
  const {env, socket, fetch} = await liveWithRest();
  const records = new Backbone.Collection([{id: 1, name: 'rendered'}]);
  env.Herald.sync(records, 'board', {since: '1700000000000-0_1700000000000-0'});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  socket.fire('replayed', {recovered: true, count: 0, last_id: '1700000000000-0_1700000000000-0'});
  socket.fire('notification', {...change(1700000000500, 'board.updated', {id: 1, name: 'live'}), id: '1700000000500-0-1'});
  fetch.requests[0].answer(page([
    {...change(1700000000100, 'board.updated', {id: 1, name: 'older'}), id: '1700000000100-0-1'},
    {...change(1700000000500, 'board.updated', {id: 1, name: 'live'}), id: '1700000000500-0-1'}
  ]));
  await flush();
  assert.equal(records.get(1).get('name'), 'live');
});
