// The token source: a static `token`, or `getToken` (a value or a promise of
// one) asked again half-way to expiry, after an unauthorized refusal, or a 401.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {loadHerald, flush, connected, jwt} = require('./harness');

// A getToken that answers `tokens` in turn (the last one again after), counting calls.
function source(...tokens) {
  const fetch = () => {
    fetch.calls++;
    return Promise.resolve(tokens.length > 1 ? tokens.shift() : tokens[0]);
  };
  fetch.calls = 0;
  return fetch;
}

test('connect needs a token or a getToken function', () => {
  const {Herald} = loadHerald();
  assert.throws(() => Herald.connect({}), /give a token or a getToken function/);
});

test('a static token is sent on every handshake', async () => {
  const env = loadHerald();
  const {socket} = await connected(env, {token: 'static-1'});
  assert.equal((await socket.auth()).token, 'static-1');
  env.clock.now += 365 * 24 * 3600 * 1000;
  assert.equal((await socket.auth()).token, 'static-1');
});

test('an unauthorized refusal is tried once more at once; a second one is final', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env, {token: 'static-1'});
  const errors = [];
  client.on('error', (error) => errors.push(error.message));
  socket.refuse('unauthorized: token expired');
  assert.equal(socket.connects, 1, 'reconnected');
  assert.equal(env.timers.all.length, 0, 'at once, with no backoff');
  assert.equal(client.state, 'reconnecting');
  socket.refuse('unauthorized: token expired');
  assert.equal(socket.connects, 1);
  assert.deepEqual(errors, ['unauthorized: token expired']);
  assert.equal(client.state, 'offline');

  // A later connection that is accepted earns the next refusal its one retry again.
  socket.connect();
  socket.accept();
  socket.refuse('unauthorized: token revoked');
  assert.equal(socket.connects, 3);
});

test('getToken gives the first token and is not asked again while it is fresh', async () => {
  const env = loadHerald();
  const getToken = source('A', 'B');
  const {socket} = await connected(env, {getToken});
  assert.equal((await socket.auth()).token, 'A');
  assert.equal((await socket.auth()).token, 'A');
  assert.equal(getToken.calls, 1);
});

test('getToken may answer with a plain value', async () => {
  const env = loadHerald();
  const {socket} = await connected(env, {getToken: () => 'plain'});
  assert.equal((await socket.auth()).token, 'plain');
});

test('after an unauthorized refusal, getToken is asked again before the retry', async () => {
  const env = loadHerald();
  const getToken = source('A', 'B');
  const {socket} = await connected(env, {getToken});
  assert.equal((await socket.auth()).token, 'A');
  socket.refuse('unauthorized: token expired');
  assert.equal(socket.connects, 1);
  assert.equal((await socket.auth()).token, 'B');
  assert.equal(getToken.calls, 2);
});

test('with tokenTtl, the token is renewed half-way to its expiry', async () => {
  const env = loadHerald();
  const getToken = source('B', 'C');
  const {socket} = await connected(env, {token: 'A', getToken, tokenTtl: 60});
  assert.equal((await socket.auth()).token, 'A');
  env.clock.now += 29999;
  assert.equal((await socket.auth()).token, 'A');
  assert.equal(getToken.calls, 0);
  env.clock.now += 1;
  assert.equal((await socket.auth()).token, 'B');
  env.clock.now += 29999;
  assert.equal((await socket.auth()).token, 'B', 'the new token has its own half-life');
  env.clock.now += 1;
  assert.equal((await socket.auth()).token, 'C');
});

test("a JWT is renewed half-way from its iat to its exp; its sub is the user", async () => {
  const env = loadHerald({now: 1000000});
  const first = jwt({sub: 'ana', iat: 1000, exp: 1100});
  const getToken = source('renewed');
  const {client, socket} = await connected(env, {token: first, getToken});
  assert.equal(client.user, 'ana');
  env.clock.now = 1049999;
  assert.equal((await socket.auth()).token, first);
  env.clock.now = 1050000;
  assert.equal((await socket.auth()).token, 'renewed');
});

test('a getToken that fails keeps the token there was', async () => {
  const env = loadHerald();
  const {socket} = await connected(env, {token: 'A', getToken: () => Promise.reject(new Error('down')), tokenTtl: 10});
  env.clock.now += 6000;
  assert.equal((await socket.auth()).token, 'A');
});

test('asks made while getToken is on its way share its one answer', async () => {
  const env = loadHerald();
  let release;
  let calls = 0;
  const getToken = () => { calls++; return new Promise((resolve) => { release = resolve; }); };
  const {socket} = await connected(env, {getToken});
  const first = socket.auth();
  const second = socket.auth();
  await flush();
  release('shared');
  assert.deepEqual([(await first).token, (await second).token], ['shared', 'shared']);
  assert.equal(calls, 1);
});

// A fetch that answers `statuses` in turn, recording each request's token.
function fakeFetch(...statuses) {
  const fetch = (url, init) => {
    fetch.requests.push({url, token: init.headers.Authorization});
    const status = statuses.shift();
    return Promise.resolve({status, ok: status < 400, json: () => Promise.resolve({status})});
  };
  fetch.requests = [];
  return fetch;
}

test('a REST call refused with 401 renews the token and is made once more', async () => {
  const fetch = fakeFetch(401, 200);
  const env = loadHerald({fetch});
  const {client} = await connected(env, {url: 'https://herald.example/h', token: 'A', getToken: source('B')});
  const reply = await client.get('/api/read-state', {upto: '5-0', skip: null});
  assert.deepEqual(reply, {status: 200});
  assert.deepEqual(fetch.requests, [
    {url: 'https://herald.example/h/api/read-state?upto=5-0', token: 'Bearer A'},
    {url: 'https://herald.example/h/api/read-state?upto=5-0', token: 'Bearer B'}
  ]);
});

test('with a static token, a 401 is an error, not a retry', async () => {
  const fetch = fakeFetch(401, 200);
  const env = loadHerald({fetch});
  const {client} = await connected(env, {token: 'A'});
  await assert.rejects(client.get('/api/read-state'), (error) => error.status === 401);
  assert.equal(fetch.requests.length, 1);
});

test('a JWT connection the server ends at its expiry comes back with a fresh token', async () => {
  // Herald disconnects a connection when its host-app token expires (docs/contract.md).
  const env = loadHerald({now: 1000000});
  const first = jwt({sub: 'ana', iat: 1000, exp: 1100});
  const getToken = source('fresh');
  const {client, socket} = await connected(env, {token: first, getToken});
  env.clock.now = 1100000;
  socket.drop('io server disconnect');
  assert.equal(client.state, 'reconnecting');
  env.timers.runAll();
  assert.equal(socket.connects, 1, 'it connects again by itself');
  assert.equal((await socket.auth()).token, 'fresh');
  assert.equal(getToken.calls, 1);
});
