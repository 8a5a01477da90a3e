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
