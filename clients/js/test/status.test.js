// Honest status: what the page hears when Herald or its Redis is out of reach,
// when the next reconnect comes, and failed changes said plainly (action:error).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {loadHerald, flush, connected, record} = require('./harness');

const named = (events, name) => events.filter((e) => e[0] === name).map((e) => e.slice(1));

test("the server's `status` reaches the dispatcher, and a reconnect ends a `down` heard before", async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env);
  const events = record(client);
  socket.accept();
  assert.equal(client.redis, 'up');
  socket.fire('status', {redis: 'down', since: 1700000000000});
  assert.equal(client.redis, 'down');
  socket.fire('status', {redis: 'sideways'});  // not a status: ignored
  socket.drop('transport close');
  env.timers.runAll();
  socket.accept();  // back, and the server said nothing: Redis is up there
  assert.deepEqual(named(events, 'status'), [
    [{redis: 'down', since: 1700000000000}],
    [{redis: 'up', since: env.clock.now}]
  ]);
  assert.equal(client.redis, 'up');
  socket.fire('status', {redis: 'down', since: 5});  // sent right after connect: still down
  assert.equal(client.redis, 'down');
});

test('`retrying` says when the next reconnect is tried; retryAt is cleared once connected', async () => {
  const env = loadHerald({random: 0.5});
  const {client, socket} = await connected(env);
  const events = record(client);
  socket.accept();
  assert.equal(client.retryAt, null);
  socket.drop('transport close');
  assert.deepEqual(named(events, 'retrying'), [[{at: env.clock.now + 250, delay: 250, reason: null}]]);
  assert.equal(client.retryAt, env.clock.now + 250);
  socket.fail();
  assert.deepEqual(named(events, 'retrying')[1], [{at: env.clock.now + 500, delay: 500, reason: null}]);
  socket.refuse('unavailable: Redis is unreachable, retry shortly');
  assert.equal(named(events, 'retrying')[2][0].reason, 'unavailable: Redis is unreachable, retry shortly',
               'a refusal says why');
  env.timers.runAll();
  assert.equal(client.retryAt, null, 'due: being tried');
  socket.accept();
  assert.equal(client.retryAt, null);
});

test('reconnect() ("Retry now") connects at once instead of waiting, and not when connected', async () => {
  const env = loadHerald({random: 0.5});
  const {client, socket} = await connected(env);
  socket.accept();
  assert.equal(client.reconnect(), false, 'connected: nothing to do');
  assert.equal(socket.connects, 0);
  socket.drop('transport close');
  const waiting = env.timers.pending()[0];
  assert.equal(client.reconnect(), true);
  assert.equal(socket.connects, 1);
  assert.equal(waiting.cleared, true, 'the waiting retry is dropped');
  assert.equal(client.retryAt, null);
  socket.fail();  // still away: the next wait is the longer one (the backoff goes on)
  assert.equal(env.timers.last().delay, 500);
});

test('reconnect() tries again after the server refused for good', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env);
  socket.refuse('forbidden: go away');
  assert.equal(client.state, 'offline');
  assert.equal(client.reconnect(), true);
  assert.equal(client.state, 'reconnecting');
  assert.equal(socket.connects, 1);
});

// A fetch whose answers are given in turn: a status (with an `error` body past 399),
// or 'down' for a network failure (the browser's "Failed to fetch").
function fakeFetch(...answers) {
  const fetch = (url, init) => {
    fetch.requests.push({url, method: init.method || 'GET'});
    const answer = answers.shift();
    if (answer === 'down') return Promise.reject(new TypeError('Failed to fetch'));
    const body = answer < 400 ? {ok: true} : {error: 'the server says ' + answer};
    return Promise.resolve({status: answer, ok: answer < 400, json: () => Promise.resolve(body)});
  };
  fetch.requests = [];
  return fetch;
}

test('an action that cannot reach Herald is said plainly, with status 0, retryable, as action:error', async () => {
  const env = loadHerald({fetch: fakeFetch('down')});
  const {client} = await connected(env);
  const events = record(client);
  const error = await client.archive(['5-0', '6-0']).then(() => null, (e) => e);
  assert.equal(error.message, 'Herald is unreachable: your change was not saved.');
  assert.equal(error.status, 0);
  assert.equal(error.retryable, true);
  assert.equal(error.action, 'archive');
  assert.deepEqual(error.ids, ['5-0', '6-0']);
  assert.equal(error.cause.message, 'Failed to fetch');
  const heard = named(events, 'action:error');
  assert.equal(heard.length, 1, 'once');
  const [message, detail] = heard[0];
  assert.equal(message, 'Herald is unreachable: your change was not saved.');
  assert.deepEqual({status: detail.status, retryable: detail.retryable, action: detail.action,
                    ids: detail.ids, message: detail.message},
                   {status: 0, retryable: true, action: 'archive', ids: ['5-0', '6-0'],
                    message: 'Herald is unreachable: your change was not saved.'});
  assert.equal(detail.error, error);
});

test('a 503 (Redis away) is unreachable and retryable; a 400 keeps the server\'s words and is not', async () => {
  const env = loadHerald({fetch: fakeFetch(503, 400, 200)});
  const {client} = await connected(env);
  const events = record(client);
  const unavailable = await client.snooze('7-0', 123).then(() => null, (e) => e);
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.retryable, true);
  assert.match(unavailable.message, /^Herald is unreachable \(its database, Redis, is not answering\): your change was not saved\.$/);
  assert.equal(unavailable.detail, 'the server says 503');
  const refused = await client.send('/api/preferences', {}, 'PUT').then(() => null, (e) => e);
  assert.equal(refused.message, 'the server says 400');
  assert.equal(refused.status, 400);
  assert.equal(refused.retryable, false);
  assert.deepEqual(named(events, 'action:error').map((e) => [e[1].action, e[1].status]),
                   [['snooze', 503], ['send', 400]]);
  assert.deepEqual(await client.unsnooze('7-0'), {ok: true});
  assert.equal(named(events, 'action:error').length, 2, 'a success says nothing');
});

test('a read that fails says so too, without action:error (it changed nothing)', async () => {
  const env = loadHerald({fetch: fakeFetch('down', 503)});
  const {client} = await connected(env);
  const events = record(client);
  const lost = await client.history({limit: 5}).then(() => null, (e) => e);
  assert.equal(lost.message, 'Herald is unreachable: this could not be loaded.');
  assert.deepEqual([lost.status, lost.retryable], [0, true]);
  const busy = await client.readState().then(() => null, (e) => e);
  assert.deepEqual([busy.status, busy.retryable], [503, true]);
  assert.deepEqual(named(events, 'action:error'), []);
});

test('markRead while not connected fails at once, plainly, rather than being lost', async () => {
  const env = loadHerald();
  const {client, socket} = await connected(env);
  const events = record(client);
  const error = await client.markRead({ids: ['9-0']}).then(() => null, (e) => e);
  assert.equal(error.message, 'Herald is unreachable: your change was not saved.');
  assert.deepEqual([error.status, error.retryable, error.action], [0, true, 'read']);
  assert.deepEqual(error.ids, ['9-0']);
  assert.equal(socket.emitted.length, 0, 'nothing sent');
  assert.equal(named(events, 'action:error').length, 1);

  socket.accept();
  const pending = client.markRead({upto: '9-0'}).then(() => null, (e) => e);
  await flush();
  const request = socket.emitted.find((e) => e.event === 'read');
  request.ack(null, {ok: false, error: 'Redis is unreachable; nothing was changed, try again'});
  const refused = await pending;
  assert.deepEqual([refused.status, refused.retryable], [503, true]);
  assert.match(refused.message, /^Herald is unreachable .*your change was not saved\.$/);
});
