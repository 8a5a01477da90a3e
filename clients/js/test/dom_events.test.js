// Every notification delivered is also a DOM event `herald:<topic>` on the
// body (bubbling to the document), detail the envelope: htmx, Alpine and plain
// scripts hear it with no Herald code.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {loadHerald, connected} = require('./harness');

// A connected client on a page; `heard` is every notification, dispatcher and
// DOM alike, in the order they came: ['notification', id] or ['dom', type, id].
async function page(options = {}, documentOptions = true) {
  const env = loadHerald({document: documentOptions});
  const {client, socket} = await connected(env, options);
  const heard = [];
  client.on('notification', (n) => heard.push(['notification', n.id]));
  socket.accept();
  return {env, client, socket, heard};
}

const envelope = (id, topic) => ({id, topic, title: topic, kind: 'data', data: {id: 1}});

test('each notification, live or replayed, is a herald:<topic> CustomEvent on the body, once, in order', async () => {
  const {env, socket, heard} = await page();
  const seen = [];
  env.document.body.addEventListener('herald:board.card.updated', (event) => {
    seen.push(event);
    heard.push(['dom', event.type, event.detail.id]);
  });
  env.document.body.addEventListener('herald:board.card.created', (event) => {
    heard.push(['dom', event.type, event.detail.id]);
  });
  const first = envelope('1-0', 'board.card.updated');
  socket.fire('notification', first);
  socket.fire('notifications', [envelope('2-0', 'board.card.created'), envelope('3-0', 'board.card.updated')]);
  socket.fire('notification', envelope('2-0', 'board.card.created'));  // a duplicate: dropped
  assert.deepEqual(heard, [
    ['notification', '1-0'], ['dom', 'herald:board.card.updated', '1-0'],
    ['notification', '2-0'], ['dom', 'herald:board.card.created', '2-0'],
    ['notification', '3-0'], ['dom', 'herald:board.card.updated', '3-0']
  ]);
  assert.equal(seen[0].detail, first, 'detail is the envelope itself');
  assert.equal(seen[0].bubbles, true);
  assert.equal(seen[0].target, env.document.body);
});

test('it bubbles: document.addEventListener hears it (as htmx\'s "from:body" does on the body)', async () => {
  const {env, socket} = await page();
  const types = [];
  env.document.addEventListener('herald:ops.deploy', (event) => types.push([event.type, event.target.tagName]));
  socket.fire('notification', envelope('1-0', 'ops.deploy'));
  assert.deepEqual(types, [['herald:ops.deploy', 'body']]);
});

test('without a body yet, the event goes to the document', async () => {
  const {env, socket} = await page({}, {body: false});
  const targets = [];
  env.document.addEventListener('herald:ops', (event) => targets.push(event.target));
  socket.fire('notification', envelope('1-0', 'ops'));
  assert.deepEqual(targets, [env.document]);
});

test('a DOM listener that throws does not stop delivery; the error is reported', async () => {
  const {env, client, socket, heard} = await page();
  const reported = [];
  env.window.reportError = (error) => reported.push(error.message);
  env.document.addEventListener('herald:ops', () => { throw new Error('a page bug'); });
  let later = 0;
  client.on('notification', () => later++);
  socket.fire('notifications', [envelope('1-0', 'ops'), envelope('2-0', 'ops')]);
  assert.deepEqual(heard, [['notification', '1-0'], ['notification', '2-0']]);
  assert.equal(later, 2);
  assert.equal(client.cursor.value, '2-0');
  assert.deepEqual(reported, ['a page bug', 'a page bug']);
});

test('domEvents: false dispatches none (domEvents: true, as by default, does)', async () => {
  for (const [domEvents, expected] of [[false, 0], [true, 1]]) {
    const {env, socket, heard} = await page({domEvents});
    const dom = [];
    env.document.addEventListener('herald:ops', (event) => dom.push(event));
    socket.fire('notification', envelope('1-0', 'ops'));
    assert.deepEqual(heard, [['notification', '1-0']]);
    assert.equal(dom.length, expected, 'domEvents: ' + domEvents);
  }
});
