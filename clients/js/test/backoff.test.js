// Reconnecting: full jitter over a window that doubles per failed attempt,
// capped; never sooner than a busy server's retry_after; reset once live.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {loadHerald, flush, connected, record} = require('./harness');

const delays = (env) => env.timers.all.map((t) => t.delay);

test('a failed connect waits a delay drawn over the whole window (full jitter)', async () => {
  const env = loadHerald({random: [0, 0.25, 0.999]});
  const {socket} = await connected(env);
  socket.fail();  // window 500
  socket.fail();  // window 1000
  socket.fail();  // window 2000
  assert.deepEqual(delays(env), [0, 250, 1998]);
});

test('the window doubles with each failed attempt, up to reconnectionDelayMax', async () => {
  const env = loadHerald({random: 0.5});
  const {socket} = await connected(env);
  for (let i = 0; i < 7; i++) socket.fail();
  assert.deepEqual(delays(env), [250, 500, 1000, 2000, 2500, 2500, 2500]);

  const custom = loadHerald({random: 0.5});
  const other = await connected(custom, {reconnectionDelay: 100, reconnectionDelayMax: 1000});
  for (let i = 0; i < 6; i++) other.socket.fail();
  assert.deepEqual(delays(custom), [50, 100, 200, 400, 500, 500]);
});

test('a lost connection is retried after the delay; a newer retry replaces a waiting one', async () => {
  const env = loadHerald({random: 0.5});
  const {client, socket} = await connected(env);
  const events = record(client);
  socket.accept();
  socket.drop('transport close');
  assert.equal(client.state, 'reconnecting');
  assert.deepEqual(events.filter((e) => e[0] === 'connection'), [['connection', 'connected'], ['connection', 'reconnecting']]);
  assert.equal(env.timers.pending().length, 1);
  assert.equal(env.timers.last().delay, 250);

  socket.fail();
  assert.equal(env.timers.pending().length, 1, 'the first retry was cleared');
  assert.equal(socket.connects, 0, 'nothing is retried before its delay');
  env.timers.runAll();
  assert.equal(socket.connects, 1);
});

test('a connection the page closed is not retried', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env);
  socket.accept();
  socket.fail();
  const waiting = env.timers.pending()[0];
  client.close();
  assert.equal(client.state, 'offline');
  assert.equal(waiting.cleared, true);
  socket.drop('transport close');
  assert.equal(env.timers.pending().length, 0);
  waiting.callback();  // even if it fired anyway
  assert.equal(socket.connects, 0);
});

test("a busy server's retry_after is a floor under the random delay", async () => {
  const env = loadHerald({random: 0});
  const {socket} = await connected(env);
  socket.refuse('unavailable: busy, retry later', {retry_after: 7});
  assert.equal(env.timers.last().delay, 7000, 'never sooner than retry_after');

  env.setRandom(0.5);
  socket.refuse('unavailable: busy, retry later', {retry_after: 3});
  assert.equal(env.timers.last().delay, 3000 + 500, 'the floor plus the jitter of the second window');

  env.timers.runAll();
  assert.equal(socket.connects, 1);
});

test('retry_after is heeded up to 300 s; a missing or meaningless one is no floor', async () => {
  const env = loadHerald({random: 0});
  const {socket} = await connected(env);
  socket.refuse('unavailable: busy', {retry_after: 1000});
  socket.refuse('unavailable: busy', {retry_after: 'soon'});
  socket.refuse('unavailable: busy', {retry_after: -5});
  socket.refuse('unavailable: redis is away');
  assert.deepEqual(delays(env), [300000, 0, 0, 0]);
});

test('refusals count in a window of their own, capped at 30 s', async () => {
  const env = loadHerald({random: 0.5});
  const {socket} = await connected(env);
  socket.fail();
  socket.fail();
  socket.fail();
  socket.refuse('unavailable: busy');
  assert.equal(env.timers.last().delay, 250, 'lost attempts do not widen the refusal window');
  for (let i = 0; i < 10; i++) socket.refuse('unavailable: busy');
  assert.equal(env.timers.last().delay, 15000);
});

test('once live again (replayed to), the next loss starts from the first window', async () => {
  const env = loadHerald({random: 0.5});
  const {socket} = await connected(env);
  for (let i = 0; i < 4; i++) socket.fail();
  socket.refuse('unavailable: busy');
  socket.refuse('unavailable: busy');
  assert.deepEqual(delays(env), [250, 500, 1000, 2000, 250, 500]);

  socket.accept();
  socket.drop('transport close');  // connected, but never replayed to: not live yet
  assert.equal(env.timers.last().delay, 2500);

  socket.accept();
  socket.fire('replayed', {recovered: true, count: 0, last_id: null});
  socket.drop('transport close');
  assert.equal(env.timers.last().delay, 250);
  socket.refuse('unavailable: busy');
  assert.equal(env.timers.last().delay, 250, 'the refusal window starts again too');
});

test('back online, it tries again within the first window', async () => {
  const env = loadHerald({random: 0.5});
  const {socket} = await connected(env);
  for (let i = 0; i < 5; i++) socket.fail();
  assert.equal(env.timers.last().delay, 2500);
  env.window.dispatch('online');
  assert.equal(env.timers.last().delay, 250);
  assert.equal(env.timers.pending().length, 1);
});

test('retrying while the machine has no network reads as offline', async () => {
  const env = loadHerald({onLine: false});
  const {client, socket} = await connected(env);
  socket.fail();
  assert.equal(client.state, 'offline');
  assert.equal(env.timers.pending().length, 1, 'and it still retries');
});

test('a refusal other than unavailable or unauthorized is final', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env);
  const errors = [];
  client.on('error', (error) => errors.push(error.message));
  socket.refuse('forbidden: not your stream');
  await flush();
  assert.deepEqual(errors, ['forbidden: not your stream']);
  assert.equal(client.state, 'offline');
  assert.equal(env.timers.all.length, 0);
  assert.equal(socket.connects, 0);
});
