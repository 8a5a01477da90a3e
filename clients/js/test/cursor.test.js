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
