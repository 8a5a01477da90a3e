// Page refresh by morphing (as Turbo 8's broadcasts_refreshes): a page with
// <meta name="herald-refresh" content="board"> subscribes to board.refresh and,
// when it comes, fetches itself again and morphs its body with Idiomorph.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const {loadHerald, flush, connected, record, fakeIdiomorph, manualFetch} = require('./harness');

const named = (events, name) => events.filter((e) => e[0] === name).map((e) => e.slice(1));
const HERALD = 'https://herald.example';
const PAGE = '<html><head><title>Board (2)</title></head><body><ul id="cards"><li>two</li></ul></body></html>';

// A connected client on a page that refreshes from `board`; Idiomorph on the
// page unless {Idiomorph: null}. `send()` delivers a board.refresh notification.
async function refreshing(options = {}, envOptions = {}) {
  const fetch = manualFetch();
  const Idiomorph = envOptions.Idiomorph === null ? undefined : fakeIdiomorph();
  const env = loadHerald(Object.assign({fetch, document: {html: '<ul id="cards"><li>one</li></ul>'}, Idiomorph},
                                       envOptions, {Idiomorph}));
  const {client, socket} = await connected(env, Object.assign({url: HERALD, refresh: ['board']}, options));
  const events = record(client);
  socket.accept();
  let seq = 0;
  const send = (topic) => socket.fire('notification', {
    id: '2000-' + (seq++), topic: topic || 'board.refresh', title: 'board changed', kind: 'data',
    data: {stream: 'board'}
  });
  const refreshed = [];
  env.document.addEventListener('herald:refreshed', (event) => refreshed.push(event.detail));
  return {env, client, socket, fetch, Idiomorph, events, send, refreshed};
}

// Run the waiting refresh timer (the debounce or a retry), then let the fetch start.
async function due(env) {
  env.timers.runAll();
  await flush();
}

test('Herald.pageOptions reads the herald-refresh meta tags into options.refresh', () => {
  const env = loadHerald({document: {meta: [['herald-refresh', 'board'], ['herald-refresh', ' ops.deploys '],
                                            ['herald-refresh', 'board'], ['herald-refresh', ''],
                                            ['description', 'not ours']]}});
  const block = env.document.createElement('script');
  block.setAttribute('id', 'herald-connect');
  block.textContent = JSON.stringify({url: HERALD, token: 'T', user: 'ann'});
  env.document.body.appendChild(block);
  assert.deepEqual(env.Herald.pageOptions().refresh, ['board', 'ops.deploys']);
  assert.deepEqual(env.Herald.pageOptions({refresh: ['mine']}).refresh, ['mine'], 'extra options win');

  const bare = loadHerald({document: true});
  const other = bare.document.createElement('script');
  other.setAttribute('id', 'herald-connect');
  other.textContent = JSON.stringify({url: HERALD, token: 'T'});
  bare.document.body.appendChild(other);
  assert.equal('refresh' in bare.Herald.pageOptions(), false);
  assert.equal('lastId' in bare.Herald.pageOptions(), false, 'no cursor rendered: none');
});

test('Herald.pageOptions passes the page\'s rendered cursor on as lastId (its first connect replays after it)', () => {
  const env = loadHerald({document: true});
  const block = env.document.createElement('script');
  block.setAttribute('id', 'herald-connect');
  block.textContent = JSON.stringify({url: HERALD, token: 'T', user: 'ann', lastId: '1700000000000-3'});
  env.document.body.appendChild(block);
  assert.equal(env.Herald.pageOptions().lastId, '1700000000000-3');
  assert.equal(env.Herald.pageOptions({lastId: '1700000000000-9'}).lastId, '1700000000000-9');
});

test('connect({refresh}) subscribes to each <stream>.refresh on every connect; a bad name throws', async () => {
  const env = loadHerald();
  const {socket} = await connected(env, {topics: ['ops'], refresh: ['board', 'team.a']});
  socket.accept();
  await flush();
  assert.deepEqual(socket.emitted[0].payload, {topics: ['ops', 'board.refresh', 'team.a.refresh']});
  assert.throws(() => env.Herald.connect({token: 'T', refresh: ['Board!']}), /is not a stream name/);
});

test('a burst of refresh notifications makes one refresh, 150 ms after the last', async () => {
  const {env, fetch, Idiomorph, events, send, refreshed} = await refreshing();
  send();
  send();
  send('board.card.updated');  // not a refresh
  send();
  assert.equal(fetch.requests.length, 0, 'nothing fetched at once');
  assert.equal(env.timers.pending().length, 1, 'one refresh waits');
  assert.equal(env.timers.pending()[0].delay, 150);
  await due(env);
  assert.equal(fetch.requests.length, 1);
  const request = fetch.requests[0];
  assert.equal(request.href, 'https://app.example/board', 'the page itself');
  assert.equal(request.init.credentials, 'same-origin');
  assert.equal(request.init.headers.Accept, 'text/html');
  assert.equal(request.init.headers['X-Herald-Refresh'], '1');
  request.answer(PAGE);
  await flush();
  assert.equal(Idiomorph.calls.length, 1);
  const call = Idiomorph.calls[0];
  assert.equal(call.oldNode, env.document.body);
  assert.equal(call.newNode.innerHTML, '<ul id="cards"><li>two</li></ul>');
  assert.equal(call.options.morphStyle, 'outerHTML', 'the body itself, never nested in itself');
  assert.equal(call.options.ignoreActiveValue, true, 'the field being typed in keeps its value');
  assert.equal(call.options.restoreFocus, true);
  assert.equal(env.document.body.innerHTML, '<ul id="cards"><li>two</li></ul>');
  assert.equal(env.document.title, 'Board (2)');
  assert.deepEqual(refreshed, [{url: 'https://app.example/board'}]);
  assert.deepEqual(named(events, 'refreshed'), [[{url: 'https://app.example/board'}]]);
  assert.equal(env.timers.pending().length, 0);
});

test('refreshDelay sets the debounce; a steady stream of changes still refreshes within a second', async () => {
  const {env, send} = await refreshing({refreshDelay: 40});
  const start = env.clock.now;
  send();
  const first = env.timers.pending()[0];
  assert.equal(first.delay, 40);
  env.clock.now += 30;
  send();
  assert.equal(first.cleared, true, 'put off by a change within the delay');
  while (env.clock.now - start < 1000) {
    env.clock.now += 30;
    send();
  }
  const waiting = env.timers.pending();
  assert.equal(waiting.length, 1);
  for (let i = 0; i < 5; i++) {
    env.clock.now += 30;
    send();
  }
  assert.deepEqual(env.timers.pending(), waiting, 'a second after the first change, it is put off no more');
  assert.equal(waiting[0].cleared, false);
});

test('never two at once: changes during a refresh make exactly one more after it', async () => {
  const {env, fetch, Idiomorph, send} = await refreshing();
  send();
  await due(env);
  assert.equal(fetch.requests.length, 1);
  send();
  send();
  assert.equal(env.timers.pending().length, 0, 'nothing waits beside the running refresh');
  await due(env);
  assert.equal(fetch.requests.length, 1, 'no second fetch while the first runs');
  fetch.requests[0].answer(PAGE);
  await flush();
  assert.equal(Idiomorph.calls.length, 1);
  assert.equal(env.timers.pending().length, 1, 'one more, after it');
  await due(env);
  assert.equal(fetch.requests.length, 2);
  fetch.requests[1].answer(PAGE);
  await flush();
  assert.equal(Idiomorph.calls.length, 2);
  assert.equal(env.timers.pending().length, 0);
});

test('a page that answers with another by a redirect (a sign-in page) is never morphed in', async () => {
  const {env, fetch, Idiomorph, events, send} = await refreshing();
  send();
  await due(env);
  fetch.requests[0].answer('<html><body><form id="login"></form></body></html>',
                           {redirected: true, url: 'https://app.example/login'});
  await flush();
  assert.equal(Idiomorph.calls.length, 0);
  const errors = named(events, 'refresh:error');
  assert.equal(errors.length, 1);
  assert.match(errors[0][0].message, /answered with another \(https:\/\/app.example\/login\)/);
});

test('a refresh that fails (HTTP 500) is refresh:error and is tried again once; never a reload', async () => {
  const {env, fetch, Idiomorph, events, send} = await refreshing();
  let reloads = 0;
  env.window.location.reload = () => { reloads++; };
  send();
  await due(env);
  fetch.requests[0].answer(500);
  await flush();
  const errors = named(events, 'refresh:error');
  assert.equal(errors.length, 1);
  assert.match(errors[0][0].message, /could not refresh the page: HTTP 500/);
  assert.deepEqual(errors[0][1], {url: 'https://app.example/board', status: 500, retrying: true});
  assert.equal(env.timers.pending().length, 1);
  assert.equal(env.timers.pending()[0].delay, 3000, 'tried again later');
  await due(env);
  fetch.requests[1].answer('down');
  await flush();
  assert.deepEqual(named(events, 'refresh:error')[1][1], {url: 'https://app.example/board', status: 0, retrying: false});
  assert.equal(env.timers.pending().length, 0, 'once only');
  assert.equal(fetch.requests.length, 2);
  assert.equal(Idiomorph.calls.length, 0);
  assert.equal(reloads, 0);
  // The next change tries again, and a success counts the failures from nothing.
  send();
  await due(env);
  fetch.requests[2].answer(PAGE);
  await flush();
  assert.equal(Idiomorph.calls.length, 1);
});

test('a retry that works refreshes the page', async () => {
  const {env, fetch, Idiomorph, send} = await refreshing();
  send();
  await due(env);
  fetch.requests[0].answer('down');
  await flush();
  await due(env);
  fetch.requests[1].answer(PAGE);
  await flush();
  assert.equal(Idiomorph.calls.length, 1);
  assert.equal(env.document.title, 'Board (2)');
});

test('Idiomorph is loaded from Herald the first time it is needed, once', async () => {
  const {env, fetch, send, refreshed} = await refreshing({}, {Idiomorph: null});
  assert.equal(env.document.scripts.length, 0, 'not before a refresh needs it');
  send();
  await due(env);
  assert.equal(env.document.scripts.length, 1);
  const script = env.document.scripts[0];
  assert.equal(script.src, HERALD + '/client/idiomorph.js');
  assert.equal(script.parentNode, env.document.head);
  fetch.requests[0].answer(PAGE);
  await flush();
  assert.deepEqual(refreshed, [], 'waits for Idiomorph');
  const Idiomorph = fakeIdiomorph();
  script.load(() => { env.window.Idiomorph = Idiomorph; });
  await flush();
  assert.equal(Idiomorph.calls.length, 1);
  assert.equal(refreshed.length, 1);
  send();
  await due(env);
  fetch.requests[1].answer(PAGE);
  await flush();
  assert.equal(env.document.scripts.length, 1, 'loaded once');
  assert.equal(Idiomorph.calls.length, 2);
});

test('idiomorphUrl overrides where Idiomorph comes from; one that cannot load is a refresh:error, tried again', async () => {
  const {env, fetch, events, send} = await refreshing({idiomorphUrl: '/static/idiomorph.js'}, {Idiomorph: null});
  send();
  await due(env);
  assert.equal(env.document.scripts[0].src, '/static/idiomorph.js');
  env.document.scripts[0].fail();
  fetch.requests[0].answer(PAGE);
  await flush();
  assert.equal(env.document.scripts[0].parentNode, null, 'the failed tag is taken out');
  const errors = named(events, 'refresh:error');
  assert.equal(errors.length, 1);
  assert.match(errors[0][0].message, /could not load \/static\/idiomorph.js/);
  await due(env);
  assert.equal(env.document.scripts.length, 2, 'loaded again on the retry');
  const Idiomorph = fakeIdiomorph();
  env.document.scripts[1].load(() => { env.window.Idiomorph = Idiomorph; });
  fetch.requests[1].answer(PAGE);
  await flush();
  assert.equal(Idiomorph.calls.length, 1);
});

test('Herald.refresh() refreshes now, without a refresh stream or a wait', async () => {
  const {env, fetch, Idiomorph} = await refreshing({refresh: []});
  const done = env.Herald.refresh();
  await flush();
  assert.equal(fetch.requests.length, 1);
  fetch.requests[0].answer(PAGE);
  assert.equal(await done, true);
  assert.equal(Idiomorph.calls.length, 1);
  const failed = env.Herald.refresh();
  await flush();
  fetch.requests[1].answer(404);
  assert.equal(await failed, false);
});

test('a reset (replay could not cover the gap) refreshes the page', async () => {
  const {env, socket, fetch} = await refreshing();
  socket.fire('replayed', {recovered: false, count: 0, last_id: null});
  await due(env);
  assert.equal(fetch.requests.length, 1);
});

test('an element with an id and data-herald-permanent is not morphed', async () => {
  const {env, fetch, Idiomorph, send} = await refreshing();
  send();
  await due(env);
  fetch.requests[0].answer(PAGE);
  await flush();
  const {beforeNodeMorphed} = Idiomorph.calls[0].options.callbacks;
  const kept = env.document.createElement('div');
  kept.setAttribute('id', 'player');
  kept.setAttribute('data-herald-permanent', '');
  const plain = env.document.createElement('div');
  plain.setAttribute('id', 'cards');
  const noId = env.document.createElement('div');
  noId.setAttribute('data-herald-permanent', '');
  assert.equal(beforeNodeMorphed(kept, plain), false);
  assert.equal(beforeNodeMorphed(plain, plain), true);
  assert.equal(beforeNodeMorphed(noId, plain), true);
  assert.equal(beforeNodeMorphed({nodeType: 3}, plain), true, 'text nodes are morphed');
});

test('a field the user changed keeps its value through a refresh, focused or not', async () => {
  const {env, fetch, Idiomorph, send} = await refreshing();
  send();
  await due(env);
  fetch.requests[0].answer(PAGE);
  await flush();
  const {beforeNodeMorphed} = Idiomorph.calls[0].options.callbacks;
  const field = (tagName, more) => Object.assign(
    {nodeType: 1, tagName: tagName, id: '', hasAttribute: () => false}, more);
  const fresh = field('TEXTAREA', {value: '', defaultValue: ''});
  assert.equal(beforeNodeMorphed(field('TEXTAREA', {value: 'Half a thought', defaultValue: ''}), fresh),
               false, 'typed in: kept');
  assert.equal(beforeNodeMorphed(field('TEXTAREA', {value: 'as rendered', defaultValue: 'as rendered'}),
                                 fresh), true, 'untouched: morphed');
  assert.equal(beforeNodeMorphed(field('INPUT', {type: 'text', value: 'x', defaultValue: ''}), fresh), false);
  assert.equal(beforeNodeMorphed(field('INPUT', {type: 'hidden', value: 'x', defaultValue: ''}), fresh), true,
               'a hidden field is the page\'s, not the user\'s');
  assert.equal(beforeNodeMorphed(field('INPUT', {type: 'checkbox', checked: true, defaultChecked: false}),
                                 fresh), false);
  const select = (selectedIndex, defaults, multiple) => field('SELECT', {
    selectedIndex: selectedIndex, multiple: Boolean(multiple),
    options: defaults.map((marked, i) => ({defaultSelected: marked, selected: i === selectedIndex}))});
  assert.equal(beforeNodeMorphed(select(1, [false, false]), fresh), false, 'another option chosen: kept');
  assert.equal(beforeNodeMorphed(select(0, [false, false]), fresh), true,
               'rendered with no option selected, showing its first: untouched, so morphed');
  assert.equal(beforeNodeMorphed(select(1, [false, true]), fresh), true, 'the option rendered selected');
  assert.equal(beforeNodeMorphed(select(0, [false, true]), fresh), false);
  assert.equal(beforeNodeMorphed(select(0, [true, false], true), fresh), true, 'multiple, as rendered');
  assert.equal(beforeNodeMorphed(select(1, [true, false], true), fresh), false);
});

test('a page that moved on (pushState) during the fetch is not morphed with the old address\'s page', async () => {
  const {env, fetch, Idiomorph, send} = await refreshing();
  send();
  await due(env);
  env.window.location.href = 'https://app.example/board?page=2';
  fetch.requests[0].answer(PAGE);
  await flush();
  assert.equal(Idiomorph.calls.length, 0);
  await due(env);
  assert.equal(fetch.requests[1].href, 'https://app.example/board?page=2');
});

test('a closed client refreshes no more', async () => {
  const {env, client, fetch, send} = await refreshing();
  send();
  client.close();
  assert.equal(env.timers.pending().length, 0);
  assert.equal(fetch.requests.length, 0);
});
