// A page loaded while Herald is down goes live when Herald returns: the host
// serves herald.js, but socket.io-client comes from Herald, so the client loads
// it itself, retrying with the reconnect backoff, then connects from its cursor.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {loadHerald, flush, connected, record} = require('./harness');

const named = (events, name) => events.filter((e) => e[0] === name).map((e) => e.slice(1));
const HERALD = 'https://herald.example/herald';

// A page without socket.io-client (io: false) and a client connecting to HERALD.
async function withoutIo(options = {}) {
  const env = loadHerald({io: false, document: true, random: 0.5});
  const client = env.Herald.connect(Object.assign({url: HERALD, token: 'T'}, options));
  const events = record(client);
  await flush();
  return {env, client, events};
}

// What loading socket.io-client.js defines: window.io.
const defineIo = (env) => () => { env.window.io = env.io; };

test('without io, connect does not throw: it loads socket.io-client from Herald', async () => {
  const {env, client} = await withoutIo();
  assert.equal(client.state, 'connecting');
  assert.equal(env.document.scripts.length, 1);
  assert.equal(env.document.scripts[0].src, HERALD + '/client/socket.io.js');
  assert.equal(env.sockets.length, 0);
  env.document.scripts[0].load(defineIo(env));
  await flush();
  assert.equal(env.sockets.length, 1);
  assert.equal(env.sockets[0].url, 'https://herald.example/notifications');
  env.sockets[0].accept();
  assert.equal(client.state, 'connected');
});

test('while Herald is down, the load is retried with the reconnect backoff, then goes live from the cursor', async () => {
  const {env, client, events} = await withoutIo({lastId: '1700000000000-4'});
  env.document.scripts[0].fail();
  await flush();
  assert.equal(client.state, 'reconnecting');
  assert.equal(env.document.scripts[0].parentNode, null, 'the failed tag is taken out');
  const retrying = named(events, 'retrying');
  assert.equal(retrying.length, 1);
  assert.deepEqual(retrying[0][0], {
    at: env.clock.now + 250, delay: 250,
    reason: 'socket.io-client could not be loaded from ' + HERALD + '/client/socket.io.js'
  });
  assert.equal(env.document.scripts.length, 1, 'nothing tried before the delay');
  env.timers.runAll();
  assert.equal(env.document.scripts.length, 2);
  env.document.scripts[1].fail();
  await flush();
  assert.equal(named(events, 'retrying')[1][0].delay, 500, 'the window doubles, as for reconnects');
  env.timers.runAll();
  env.document.scripts[2].load(defineIo(env));
  await flush();
  assert.equal(env.sockets.length, 1);
  const socket = env.sockets[0];
  assert.deepEqual(await socket.auth(), {token: 'T', last_id: '1700000000000-4'}, 'from its cursor');
  socket.accept();
  assert.equal(client.state, 'connected');
  socket.fire('notification', {id: '1700000000000-4', topic: 'ops', title: 'seen already'});
  socket.fire('notification', {id: '1700000000000-5', topic: 'ops', title: 'missed'});
  assert.deepEqual(named(events, 'notification').map((n) => n[0].title), ['missed']);
});

test('socketIoUrl says where socket.io-client comes from', async () => {
  const {env} = await withoutIo({socketIoUrl: '/vendor/socket.io.min.js'});
  assert.equal(env.document.scripts[0].src, '/vendor/socket.io.min.js');
});

test('a script that loads but defines no io is a failure too', async () => {
  const {env, events} = await withoutIo();
  env.document.scripts[0].load();
  await flush();
  assert.equal(named(events, 'retrying').length, 1);
  assert.equal(env.sockets.length, 0);
});

test('io that the page gets meanwhile (another script) is used without loading it again', async () => {
  const {env} = await withoutIo();
  env.document.scripts[0].fail();
  await flush();
  env.window.io = env.io;
  env.timers.runAll();
  assert.equal(env.document.scripts.length, 1);
  assert.equal(env.sockets.length, 1);
});

test('reconnect() ("Retry now") loads at once; close() stops the retries', async () => {
  const {env, client} = await withoutIo();
  assert.equal(client.reconnect(), false, 'a load is on its way already');
  env.document.scripts[0].fail();
  await flush();
  assert.equal(client.reconnect(), true);
  assert.equal(env.document.scripts.length, 2);
  assert.equal(env.timers.pending().length, 0, 'the waiting retry is called off');
  env.document.scripts[1].fail();
  await flush();
  client.close();
  assert.equal(env.timers.pending().length, 0);
  env.timers.all[env.timers.all.length - 1].callback();  // even if it fired anyway
  assert.equal(env.document.scripts.length, 2);
});

test('it still throws for a missing token and getToken', () => {
  const env = loadHerald({io: false, document: true});
  assert.throws(() => env.Herald.connect({url: HERALD}), /give a token or a getToken function/);
});

test('a first connect that fails (Herald down, io loaded) is retried for as long as it fails', async () => {
  const env = loadHerald({random: 0.5});
  const {client, socket} = await connected(env);
  const events = record(client);
  for (let i = 0; i < 50; i++) {
    socket.fail();
    env.timers.runAll();
  }
  assert.equal(socket.connects, 50, 'each failure retried');
  assert.equal(named(events, 'retrying').length, 50);
  assert.equal(named(events, 'error').length, 0);
  assert.equal(client.state, 'reconnecting');
  socket.accept();
  assert.equal(client.state, 'connected');
});
