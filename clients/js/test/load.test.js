// herald.js is a plain browser script: it needs nothing but `window` to load,
// and its dispatcher is Backbone's when Backbone is on the page.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const vm = require('node:vm');
const Backbone = require('backbone');
const {SOURCE, SOURCE_PATH, loadHerald, connected} = require('./harness');

test('it loads as a classic script given only a window, and defines window.Herald alone', () => {
  const window = {};
  const context = vm.createContext({window});
  new vm.Script(SOURCE, {filename: SOURCE_PATH}).runInContext(context);
  assert.deepEqual(Object.keys(window), ['Herald']);
  assert.equal(window.Herald.VERSION, '1');
  assert.deepEqual(Object.keys(window.Herald).sort(),
                   ['Client', 'Store', 'VERSION', 'compareIds', 'connect', 'isPast', 'pageOptions', 'refresh', 'sync']);
  assert.equal(context.Herald, undefined, 'no globals besides window.Herald');
});

test('without Backbone, the dispatcher is a small emitter: on, once, off, trigger', async () => {
  const env = loadHerald();
  const {client} = await connected(env);
  const heard = [];
  const each = (x) => heard.push('each ' + x);
  client.on('ping', each);
  client.once('ping', (x) => heard.push('once ' + x));
  assert.equal(client.trigger('ping', 1), client);
  client.trigger('ping', 2);
  client.off('ping', each);
  client.trigger('ping', 3);
  assert.deepEqual(heard, ['each 1', 'once 1', 'each 2']);
  assert.equal(typeof client.dispatcher.listenTo, 'undefined');
});

test('with Backbone on the page, the dispatcher is a Backbone.Events', async () => {
  const env = loadHerald({Backbone});
  const {client} = await connected(env);
  const listener = Object.assign({}, Backbone.Events);
  const heard = [];
  listener.listenTo(client.dispatcher, 'connection', (state) => heard.push(state));
  env.sockets[0].accept();
  assert.deepEqual(heard, ['connected']);
});

test('it connects to the namespace at the url given, under its path', async () => {
  const env = loadHerald();
  const {socket} = await connected(env, {url: 'https://herald.example/behind/proxy/'});
  assert.equal(socket.url, 'https://herald.example/notifications');
  assert.equal(socket.options.path, '/behind/proxy/socket.io');
  assert.equal(socket.options.reconnection, false, "socket.io's own backoff is off");

  const same = loadHerald();
  const here = await connected(same);
  assert.equal(here.socket.url, 'https://app.example/notifications');
  assert.equal(here.socket.options.path, '/socket.io');
});
