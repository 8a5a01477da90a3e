// Herald.sync with a plain store (a Map, a Herald.Store, anything with get, set
// and delete): the Backbone path's guarantees for plain objects; and Herald.Store,
// whose events a page without a framework renders from.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const Backbone = require('backbone');
const {loadHerald, flush, connected, manualFetch} = require('./harness');

// A connected client (no Backbone on the page) whose REST reads the test answers.
async function live(options) {
  const fetch = manualFetch();
  const env = loadHerald({fetch});
  const {client, socket} = await connected(env, options);
  socket.accept();
  await answer(socket, 'subscribe', []);
  let seq = 0;
  const send = (topic, data) => socket.fire('notification', {id: '1000-' + (seq++), topic, data});
  return {env, client, socket, fetch, send};
}

// Acknowledge the oldest unanswered `event` request with the list `topics`.
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

// A store with nothing but get, set and delete (and a log of the calls).
function bareStore(entries = []) {
  const items = new Map(entries);
  const calls = [];
  return {
    items,
    calls,
    get: (id) => items.get(id),
    set: (id, record) => { calls.push(['set', id]); items.set(id, record); },
    delete: (id) => { calls.push(['delete', id]); return items.delete(id); }
  };
}

// Every event a Herald.Store says, as [name, id of the record(s)...].
function storeEvents(store) {
  const events = [];
  store.on('add', (record) => events.push(['add', record.id]));
  store.on('change', (record, previous) => events.push(['change', record.id, previous.name, record.name]));
  store.on('remove', (record) => events.push(['remove', record.id]));
  store.on('update', () => events.push(['update']));
  return events;
}

// ---- Herald.Store ----

test('Herald.Store: get, set, delete, has, keys, values, forEach, size; ids compared as strings', () => {
  const {Herald} = loadHerald();
  const store = new Herald.Store([{id: 1, name: 'one'}, {id: 2, name: 'two'}]);
  assert.equal(store.size, 2);
  assert.equal(store.get(1).name, 'one');
  assert.equal(store.get('1').name, 'one', "1 and '1' are one record");
  assert.equal(store.has(2), true);
  assert.equal(store.has(3), false);
  assert.equal(store.set(3, {id: 3, name: 'three'}), store);
  assert.deepEqual(store.keys(), ['1', '2', '3']);
  assert.deepEqual(store.values().map((r) => r.name), ['one', 'two', 'three']);
  const each = [];
  store.forEach(function (record, id, which) { each.push([id, record.name, which === store, this.tag]); }, {tag: 't'});
  assert.deepEqual(each, [['1', 'one', true, 't'], ['2', 'two', true, 't'], ['3', 'three', true, 't']]);
  assert.equal(store.delete(2), true);
  assert.equal(store.delete(2), false);
  assert.equal(store.size, 2);
  const keyed = new Herald.Store([{key: 'k', name: 'kay'}], {idAttribute: 'key'});
  assert.equal(keyed.get('k').name, 'kay');
});

test('Herald.Store says add, change (with the previous record), remove, then update each time; batch says update once', () => {
  const {Herald} = loadHerald();
  const store = new Herald.Store([{id: 1, name: 'one'}]);
  const events = storeEvents(store);
  store.set(2, {id: 2, name: 'two'});
  store.set(1, {id: 1, name: 'uno'});
  store.delete(2);
  store.delete(9);  // nothing there: nothing said
  assert.deepEqual(events, [['add', 2], ['update'], ['change', 1, 'one', 'uno'], ['update'], ['remove', 2], ['update']]);
  events.length = 0;
  store.batch(() => {
    store.set(3, {id: 3});
    store.delete(1);
  });
  assert.deepEqual(events, [['add', 3], ['remove', 1], ['update']]);
  events.length = 0;
  store.batch(() => {});
  assert.deepEqual(events, [], 'a batch that changed nothing says nothing');
  store.off('update');
  store.set(4, {id: 4});
  assert.deepEqual(events, [['add', 4]]);
});

// ---- Herald.sync with a plain store ----

for (const [name, make] of [
  ['a Map', (records) => new Map(records.map((r) => [r.id, r]))],
  ['a Herald.Store', (records, Herald) => new Herald.Store(records)],
  ['a store with only get, set and delete', (records) => bareStore(records.map((r) => [r.id, r]))]
]) {
  test(`${name}: created, updated and deleted apply; stale versions are ignored`, async () => {
    const {env, send} = await live();
    const store = make([{id: 1, version: 3, name: 'three'}], env.Herald);
    env.Herald.sync(store, 'board');
    send('board.updated', {id: 1, version: 2, name: 'two'});
    send('board.updated', {id: 1, version: 3, name: 'three again'});
    send('board.created', {id: 1, version: 3, name: 'created again'});
    assert.equal(store.get(1).name, 'three');
    send('board.updated', {id: 1, version: 4, name: 'four'});
    assert.deepEqual(store.get(1), {id: 1, version: 4, name: 'four'}, 'the record is the plain object sent');
    send('board.created', {id: 2, version: 1, name: 'new'});
    assert.equal(store.get(2).name, 'new');
    send('board.deleted', {id: 2, version: 1});
    assert.equal(store.get(2), undefined);
    send('boardroom.created', {id: 3});
    send('board.renamed', {id: 4});
    send('board.created', {name: 'no id'});
    assert.equal(store.get(3), undefined);
    assert.equal(store.get(4), undefined);
  });

  test(`${name}: a deletion older than the record is ignored; a stale update cannot revive a deleted record`, async () => {
    const {env, send} = await live();
    const store = make([{id: 1, version: 4}], env.Herald);
    env.Herald.sync(store, 'board');
    send('board.deleted', {id: 1, version: 3});
    assert.ok(store.get(1));
    send('board.deleted', {id: 1, version: 4});
    assert.equal(store.get(1), undefined);
    send('board.updated', {id: 1, version: 4});
    send('board.created', {id: 1, version: 3});
    assert.equal(store.get(1), undefined);
    send('board.created', {id: 1, version: 5, name: 'back'});
    assert.equal(store.get(1).name, 'back');
  });
}

test('a Herald.Store and a Map are never taken for a Backbone collection', async () => {
  const {env, send} = await live();
  const store = new env.Herald.Store();
  const events = storeEvents(store);
  env.Herald.sync(store, 'board');
  const map = new Map();
  env.Herald.sync(map, 'board');
  // A store with an add() of its own (as a Set has) is still a plain store.
  const withAdd = Object.assign(bareStore(), {add: () => assert.fail('add is not called'), on() {}});
  env.Herald.sync(withAdd, 'board');
  send('board.created', {id: 1, name: 'one'});
  assert.deepEqual(events, [['add', 1], ['update']]);
  assert.deepEqual(map.get(1), {id: 1, name: 'one'});
  assert.deepEqual(withAdd.calls, [['set', 1]]);
  // And a Backbone collection still is one.
  const collection = new Backbone.Collection();
  env.Herald.sync(collection, 'board');
  send('board.created', {id: 2, name: 'two'});
  assert.equal(collection.get(2).get('name'), 'two');
});

test('the version and id attributes are the ones given', async () => {
  const {env, send} = await live();
  const map = new Map([['k', {key: 'k', rev: 2, name: 'two'}]]);
  env.Herald.sync(map, 'board', {version: 'rev', idAttribute: 'key'});
  send('board.updated', {key: 'k', rev: 1, name: 'one', version: 99});
  assert.equal(map.get('k').name, 'two');
  send('board.updated', {key: 'k', rev: 3, name: 'three'});
  assert.equal(map.get('k').name, 'three');
  const store = new env.Herald.Store([], {idAttribute: 'key'});
  env.Herald.sync(store, 'board');
  send('board.created', {key: 'q', name: 'by the store\'s own idAttribute'});
  assert.equal(store.get('q').name, 'by the store\'s own idAttribute');
});

test('what is neither a collection nor a store is refused, and so is {fetch: true} for a plain store', async () => {
  const {env} = await live();
  assert.throws(() => env.Herald.sync({get() {}}, 'board'), /get\(id\), set\(id, record\) and delete\(id\)/);
  assert.throws(() => env.Herald.sync(new Map(), 'board', {fetch: true}), /fetched by a function/);
});

test('fetch: the store becomes what fetch() gives, once live; what came meanwhile is applied after it; ready waits', async () => {
  const {env, socket, send} = await live();
  const store = new env.Herald.Store([{id: 1, version: 1, name: 'gone'}, {id: 2, version: 1, name: 'old'}]);
  const events = storeEvents(store);
  let resolveFetch = null;
  let fetches = 0;
  const handle = env.Herald.sync(store, 'board', {
    fetch: () => { fetches++; return new Promise((resolve) => { resolveFetch = resolve; }); }
  });
  assert.equal(fetches, 0, 'not before the subscription is live');
  await answer(socket, 'subscribe', ['board']);
  await flush();
  assert.equal(fetches, 1);
  assert.equal(await isReady(handle), false, 'ready waits for the fetch');
  send('board.updated', {id: 2, version: 3, name: 'live, newer than the fetch'});
  send('board.created', {id: 4, version: 1, name: 'live, new'});
  send('board.updated', {id: 3, version: 1, name: 'live, older than the fetch'});
  assert.equal(store.get(4), undefined, 'held while the fetch is on its way');
  resolveFetch([{id: 2, version: 2, name: 'fetched'}, {id: 3, version: 2, name: 'fetched three'}]);
  assert.equal(await isReady(handle), true);
  assert.deepEqual(store.keys(), ['2', '3', '4']);
  assert.deepEqual(store.values().map((r) => r.name), ['live, newer than the fetch', 'fetched three', 'live, new']);
  assert.deepEqual(events.filter((e) => e[0] === 'update'), [['update']], 'the fetch and what it held: one update');
  assert.deepEqual(events.filter((e) => e[0] === 'remove'), [['remove', 1]]);
});

test('fetch: a plain list (not a promise) works; a reset fetches again; a Map without a record is emptied', async () => {
  const {env, socket} = await live();
  const map = new Map([[7, {id: 7}]]);
  let answers = [[{id: 1, version: 1}], []];
  env.Herald.sync(map, 'board', {fetch: () => answers.shift()});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  assert.deepEqual([...map.keys()], [1]);
  socket.fire('replayed', {recovered: false, count: 0, last_id: null});  // could not cover the gap
  await flush();
  assert.equal(map.size, 0);
});

test('fetch: a store that cannot list its ids loses those this sync put there and the fetch no longer has', async () => {
  const {env, socket, send} = await live();
  const store = bareStore();
  let answers = [[{id: 1}, {id: 2}], [{id: 2}]];
  env.Herald.sync(store, 'board', {fetch: () => Promise.resolve(answers.shift())});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  send('board.created', {id: 3});
  socket.fire('replayed', {recovered: false, count: 0, last_id: null});  // could not cover the gap
  await flush();
  assert.deepEqual([...store.items.keys()], [2]);
});

test('fetch: a fetch that fails is sync:error, and what it held is applied', async () => {
  const {env, client, socket, send} = await live();
  const errors = [];
  client.on('sync:error', (error, details) => errors.push([error.message, details]));
  const store = new Map();
  let fail = null;
  const handle = env.Herald.sync(store, 'board', {
    fetch: () => new Promise((resolve, reject) => { fail = reject; })
  });
  await answer(socket, 'subscribe', ['board']);
  await flush();
  send('board.created', {id: 1});
  assert.equal(store.size, 0);
  fail(new Error('HTTP 500'));
  assert.equal(await isReady(handle), true);
  assert.equal(store.size, 1);
  assert.equal(errors.length, 1);
  assert.equal(errors[0][0], 'HTTP 500');
  assert.equal(errors[0][1].prefix, 'board');
  assert.equal(errors[0][1].store, store);
});

test('since: a plain store catches up over REST, each page one batch (one update)', async () => {
  const {env, socket, fetch} = await live();
  const store = new env.Herald.Store([{id: 1, version: 1, name: 'rendered'}]);
  const events = storeEvents(store);
  const handle = env.Herald.sync(store, 'board.card', {since: '1700000000000-0'});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  assert.deepEqual(fetch.requests[0].params,
                   {after: '1700000000000-0', topic: 'board.card', kind: 'all', limit: '1000'});
  fetch.requests[0].answer({notifications: [
    {id: '1700000000001-0', topic: 'board.card.updated', data: {id: 1, version: 2, name: 'changed'}},
    {id: '1700000000002-0', topic: 'board.card.created', data: {id: 2, version: 1, name: 'new'}},
    {id: '1700000000003-0', topic: 'board.card.updated', data: {id: 1, version: 1, name: 'stale'}}
  ], last_id: '1700000000003-0'});
  assert.equal(await isReady(handle), true);
  assert.deepEqual(store.values().map((r) => r.name), ['changed', 'new']);
  assert.deepEqual(events, [['change', 1, 'rendered', 'changed'], ['add', 2], ['update']]);
});

test('since: a catch-up that keeps failing fetches a plain store with its fetch function', async () => {
  const {env, socket, fetch} = await live();
  const map = new Map();
  const handle = env.Herald.sync(map, 'board', {since: '1700000000000-0', fetch: () => [{id: 9}]});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  fetch.requests[0].answer(400);  // will not pass: no retry
  assert.equal(await isReady(handle), true);
  assert.deepEqual([...map.keys()], [9]);
});

test('stop() ends a plain store\'s syncing, and a fetch still on its way changes nothing', async () => {
  const {env, socket, send} = await live();
  const map = new Map();
  let resolveFetch = null;
  const handle = env.Herald.sync(map, 'board', {fetch: () => new Promise((resolve) => { resolveFetch = resolve; })});
  await answer(socket, 'subscribe', ['board']);
  await flush();
  handle.stop();
  resolveFetch([{id: 1}]);
  send('board.created', {id: 2});
  await flush();
  assert.equal(map.size, 0);
});
