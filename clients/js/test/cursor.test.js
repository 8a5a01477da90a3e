// The cursor: the newest notification id seen, sent as last_id on every
// handshake, kept in localStorage with `remember`, restarted when a replay
// could not recover.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {loadHerald, flush, connected, fakeStorage, record} = require('./harness');

const note = (id, topic) => ({id, topic: topic || 'ops.deploy', title: 'n ' + id});

test('compareIds orders "<ms>-<seq>" ids as numbers, exactly past 2^53', () => {
  const {Herald} = loadHerald();
  const cases = [
    ['9-0', '10-0', -1],
    ['10-0', '9-0', 1],
    ['1700000000000-9', '1700000000000-10', -1],
    ['1700000000000-3', '1700000000000-3', 0],
    ['1700000000001-0', '1700000000000-99', 1],
    ['90071992547409930-1', '90071992547409929-1', 1],
    ['90071992547409930-1', '90071992547409930-2', -1],
    ['5', '5-0', 0]
  ];
  for (const [a, b, expected] of cases) assert.equal(Herald.compareIds(a, b), expected, a + ' vs ' + b);
});

test('each notification is triggered once; what is at or below the cursor is dropped', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env);
  const seen = [];
  const onTopic = [];
  client.on('notification', (n) => seen.push(n.id));
  client.on('notification:ops.deploy', (n) => onTopic.push(n.id));
  socket.accept();
  socket.fire('notification', note('10-0'));
  socket.fire('notification', note('9-5'));   // older
  socket.fire('notification', note('10-0'));  // again
  socket.fire('notifications', [note('10-1'), note('9-9'), note('11-0', 'ops.alert')]);
  assert.deepEqual(seen, ['10-0', '10-1', '11-0']);
  assert.deepEqual(onTopic, ['10-0', '10-1']);
});

test('every handshake resumes from the newest id seen, as last_id', async () => {
  const env = loadHerald();
  const {socket} = await connected(env, {token: 'T'});
  assert.deepEqual(await socket.auth(), {token: 'T'}, 'no last_id before there is one');
  socket.accept();
  socket.fire('notification', note('99-0'));
  socket.fire('notification', note('100-0'));  // newer, though "100" < "99" as text
  assert.deepEqual(await socket.auth(), {token: 'T', last_id: '100-0'});
});

test('lastId starts the cursor', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env, {lastId: '50-0'});
  const seen = [];
  client.on('notification', (n) => seen.push(n.id));
  assert.equal((await socket.auth()).last_id, '50-0');
  socket.fire('notification', note('50-0'));
  socket.fire('notification', note('50-1'));
  assert.deepEqual(seen, ['50-1']);
});

test('remember keeps the cursor in localStorage per user; a new client resumes from it', async () => {
  const storage = fakeStorage();
  const first = loadHerald({localStorage: storage});
  const ana = await connected(first, {user: 'ana', remember: true});
  ana.socket.fire('notification', note('5-0'));
  ana.socket.fire('notification', note('4-0'));
  assert.equal(storage.items.get('herald.lastId.ana'), '5-0');

  const again = await connected(loadHerald({localStorage: storage}), {user: 'ana', remember: true});
  assert.equal((await again.socket.auth()).last_id, '5-0');

  const newer = await connected(loadHerald({localStorage: storage}), {user: 'ana', remember: true, lastId: '7-0'});
  assert.equal((await newer.socket.auth()).last_id, '7-0');
  assert.equal(storage.items.get('herald.lastId.ana'), '7-0');

  const bob = await connected(loadHerald({localStorage: storage}), {user: 'bob', remember: true});
  assert.equal((await bob.socket.auth()).last_id, undefined, "another user's cursor is not his");
});

// The Cursor constructor once advanced to `lastId` first, which overwrote the
// stored id, and read the store back after: an older lastId won over a newer
// remembered cursor, and the client replayed what it had already shown.
test('with remember, an older lastId does not move the remembered cursor back', async () => {
  const storage = fakeStorage();
  storage.setItem('herald.lastId.ana', '5-0');
  const older = await connected(loadHerald({localStorage: storage}), {user: 'ana', remember: true, lastId: '3-0'});
  assert.equal((await older.socket.auth()).last_id, '5-0');
  assert.equal(storage.items.get('herald.lastId.ana'), '5-0');
});

test('without remember nothing is stored', async () => {
  const storage = fakeStorage();
  const {socket} = await connected(loadHerald({localStorage: storage}), {user: 'ana'});
  socket.fire('notification', note('5-0'));
  assert.equal(storage.items.size, 0);
});

test('a localStorage that throws (private mode) leaves a cursor in memory', async () => {
  const env = loadHerald({localStorage: fakeStorage(true)});
  const {socket} = await connected(env, {user: 'ana', remember: true});
  socket.fire('notification', note('8-0'));
  assert.equal((await socket.auth()).last_id, '8-0');
});

test('a replay that could not recover restarts the cursor where the server says, and resets', async () => {
  const storage = fakeStorage();
  const env = loadHerald({localStorage: storage});
  const {client, socket} = await connected(env, {user: 'ana', remember: true});
  const events = record(client);
  socket.accept();
  socket.fire('notification', note('9-0'));
  socket.fire('reset');
  socket.fire('replayed', {recovered: false, count: 0, last_id: '2-0'});
  assert.equal((await socket.auth()).last_id, '2-0', 'a recreated stream: back to its ids');
  assert.equal(storage.items.get('herald.lastId.ana'), '2-0');
  assert.ok(events.some((e) => e[0] === 'reset'));
  socket.fire('notification', note('3-0'));
  assert.equal(events.filter((e) => e[0] === 'notification').pop()[1].id, '3-0');

  socket.fire('replayed', {recovered: false, count: 0, last_id: null});
  assert.equal((await socket.auth()).last_id, undefined);
  assert.equal(storage.items.has('herald.lastId.ana'), false);
});

test('a recovered replay moves the cursor to its last_id', async () => {
  const env = loadHerald();
  const {socket} = await connected(env, {lastId: '4-0'});
  socket.accept();
  socket.fire('replayed', {recovered: true, count: 3, last_id: '12-0'});
  assert.equal((await socket.auth()).last_id, '12-0');
  socket.fire('replayed', {recovered: true, count: 0, last_id: '6-0'});
  assert.equal((await socket.auth()).last_id, '12-0', 'never back');
});

test("with `load`, the socket resumes where the page's REST read ended", async () => {
  const env = loadHerald();
  let loads = 0;
  const client = env.Herald.connect({token: 'T', load: () => { loads++; return Promise.resolve({last_id: '20-0'}); }});
  await flush();
  const socket = env.sockets[0];
  assert.equal(loads, 1);
  assert.equal((await socket.auth()).last_id, '20-0');
  socket.accept();
  socket.fire('replayed', {recovered: false, count: 0, last_id: '1-0'});
  await flush();
  assert.equal(loads, 2, 'a reset reloads');
  assert.equal(client.cursor.value, '20-0');
});

// ---- A sharded history (STREAM_SHARDS=N): ids "<ms>-<seq>-<k>", cursors "<id0>_<id1>_..." ----

test('compareIds sorts sharded ids by (ms, seq, shard), digit strings throughout', () => {
  const {Herald} = loadHerald();
  const cases = [
    ['5-1', '5-1-2', -1],
    ['5-1-2', '5-1', 1],
    ['5-1-2', '5-1-2', 0],
    ['5-1-0', '5-1', 0],
    ['5-1-2', '5-1-10', -1],
    ['5-1-9', '5-2', -1],
    ['5-2-1', '5-1-3', 1],
    ['6-0-1', '5-99-3', 1],
    ['90071992547409930-1-3', '90071992547409930-1-2', 1],
    ['90071992547409930-1-3', '90071992547409931-0', -1]
  ];
  for (const [a, b, expected] of cases) assert.equal(Herald.compareIds(a, b), expected, a + ' vs ' + b);
});

const CURSOR = '100-0_90-3_0-0';  // three shards, as the server's `replayed` gives it

test('a sharded cursor moves the position of each notification\'s shard only, never back', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env, {token: 'T'});
  const seen = [];
  client.on('notification', (n) => seen.push(n.id));
  socket.accept();
  socket.fire('replayed', {recovered: true, count: 0, last_id: CURSOR});
  assert.equal(client.cursor.value, CURSOR);
  socket.fire('notification', note('101-0'));      // shard 0
  socket.fire('notification', note('95-0-1'));     // shard 1, older than shard 0's: still news
  socket.fire('notification', note('7-2-2'));      // shard 2, from its start
  assert.deepEqual(seen, ['101-0', '95-0-1', '7-2-2']);
  assert.deepEqual(await socket.auth(), {token: 'T', last_id: '101-0_95-0_7-2'});
  socket.fire('notifications', [note('96-0-1'), note('102-5')]);
  assert.equal(client.cursor.value, '102-5_96-0_7-2');
  assert.deepEqual(seen, ['101-0', '95-0-1', '7-2-2', '96-0-1', '102-5']);
});

test('a sharded cursor drops what its shard has seen: a duplicate, or older', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env);
  const seen = [];
  client.on('notification', (n) => seen.push(n.id));
  socket.accept();
  socket.fire('replayed', {recovered: true, count: 0, last_id: CURSOR});
  socket.fire('notification', note('90-3-1'));   // shard 1's position itself
  socket.fire('notification', note('90-2-1'));   // older in shard 1
  socket.fire('notification', note('100-0'));    // shard 0's position
  socket.fire('notification', note('91-0-1'));
  socket.fire('notification', note('91-0-1'));   // again
  socket.fire('notification', note('99-0-2'));   // shard 2: news, though older than shard 0's
  assert.deepEqual(seen, ['91-0-1', '99-0-2']);
  assert.equal(client.cursor.value, '100-0_91-0_99-0');
});

test('an id of a shard past the cursor\'s is delivered and moves nothing', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env);
  const seen = [];
  client.on('notification', (n) => seen.push(n.id));
  socket.accept();
  socket.fire('replayed', {recovered: true, count: 0, last_id: CURSOR});
  socket.fire('notification', note('200-0-3'));
  assert.deepEqual(seen, ['200-0-3']);
  assert.equal(client.cursor.value, CURSOR);
});

test('a replayed full cursor is taken per position (never back), or whole over another form', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env, {lastId: '50-0'});
  assert.equal((await socket.auth()).last_id, '50-0', 'a single id is passed as it is');
  socket.accept();
  socket.fire('replayed', {recovered: true, count: 2, last_id: CURSOR});
  assert.equal(client.cursor.value, CURSOR, 'over a single id: the whole cursor');
  socket.fire('notification', note('120-0'));
  socket.fire('replayed', {recovered: true, count: 1, last_id: '110-0_95-0_3-0'});
  assert.equal(client.cursor.value, '120-0_95-0_3-0', 'each position the newer of the two');
  socket.fire('replayed', {recovered: true, count: 0, last_id: '1-0_1-0_1-0'});
  assert.equal(client.cursor.value, '120-0_95-0_3-0', 'never back');
  socket.fire('replayed', {recovered: true, count: 0, last_id: '5-0_6-0'});
  assert.equal(client.cursor.value, '5-0_6-0', 'another number of shards: taken whole');
  assert.equal((await socket.auth()).last_id, '5-0_6-0');
});

test('a single id answered with recovered: false restarts at the server\'s full cursor', async () => {
  const storage = fakeStorage();
  const env = loadHerald({localStorage: storage});
  const {client, socket} = await connected(env, {user: 'ana', remember: true, lastId: '1764374400000-3-2'});
  const events = record(client);
  assert.equal((await socket.auth()).last_id, '1764374400000-3-2');
  socket.accept();
  socket.fire('reset');
  socket.fire('replayed', {recovered: false, count: 0, last_id: '1764374400000-0_0-0_1764374400000-3'});
  assert.equal(client.cursor.value, '1764374400000-0_0-0_1764374400000-3');
  assert.equal(storage.items.get('herald.lastId.ana'), '1764374400000-0_0-0_1764374400000-3');
  assert.ok(events.some((e) => e[0] === 'reset'));
});

test('remember keeps the full sharded cursor; a new client resumes from it and moves it on', async () => {
  const storage = fakeStorage();
  const first = await connected(loadHerald({localStorage: storage}), {user: 'ana', remember: true});
  first.socket.accept();
  first.socket.fire('replayed', {recovered: true, count: 0, last_id: CURSOR});
  first.socket.fire('notification', note('93-1-1'));
  assert.equal(storage.items.get('herald.lastId.ana'), '100-0_93-1_0-0');
  first.socket.fire('notification', note('92-0-1'));  // older: nothing written
  assert.equal(storage.items.get('herald.lastId.ana'), '100-0_93-1_0-0');

  const again = await connected(loadHerald({localStorage: storage}), {user: 'ana', remember: true});
  assert.equal((await again.socket.auth()).last_id, '100-0_93-1_0-0');
  const seen = [];
  again.client.on('notification', (n) => seen.push(n.id));
  again.socket.accept();
  again.socket.fire('notification', note('93-1-1'));  // replayed again: seen already
  again.socket.fire('notification', note('4-0-2'));
  assert.deepEqual(seen, ['4-0-2']);
  assert.equal(storage.items.get('herald.lastId.ana'), '100-0_93-1_4-0');

  // A page's lastId of the same shape moves the remembered cursor per position.
  const page = await connected(loadHerald({localStorage: storage}),
                               {user: 'ana', remember: true, lastId: '99-0_94-0_1-0'});
  assert.equal((await page.socket.auth()).last_id, '100-0_94-0_4-0');
});

test("with `load`, a sharded REST last_id is where the socket resumes", async () => {
  const env = loadHerald();
  const client = env.Herald.connect({token: 'T', load: () => Promise.resolve({last_id: CURSOR})});
  await flush();
  assert.equal((await env.sockets[0].auth()).last_id, CURSOR);
  assert.equal(client.cursor.value, CURSOR);
});

test('isPast tells whether an id lies past a cursor of either form', () => {
  const {Herald} = loadHerald();
  assert.equal(Herald.isPast('5-1', '5-0'), true);
  assert.equal(Herald.isPast('5-0', '5-0'), false);
  assert.equal(Herald.isPast('5-1-2', '9-0_9-0_5-0'), true);   // shard 2 is at 5-0
  assert.equal(Herald.isPast('6-0-1', '9-0_9-0_5-0'), false);  // shard 1 is at 9-0
  assert.equal(Herald.isPast('6-0', '0-0'), true);
});
