// A lean Socket.IO load generator in Node: N websocket clients on /notifications.
//
// Same protocol and output as bench/loadgen.py, for less CPU per message:
// Engine.IO v4 / Socket.IO v5 spoken directly over `ws`. Latency is now minus
// `data.t` (the publisher's wall clock, ms), read straight from the frame's
// bytes (the only `"t":` key in it; a `"t":` inside a string value would be
// escaped) rather than by parsing the JSON, so that the load generator is
// not what saturates first. Prints "ready N" on stderr once all are
// subscribed, measures for --seconds (or until SIGTERM), then one JSON object
// on stdout, with a histogram of latencies by whole milliseconds so that
// several load generators' results can be merged. --idle only connects and
// holds until SIGTERM. --sse follows GET /api/stream (Server-Sent Events) instead.
//
//   node bench/loadgen.js --url http://127.0.0.1:5000 --token T --clients 1000 --seconds 10
'use strict';

const http = require('http');
const path = require('path');
const WebSocket = require(path.join(__dirname, 'peers/node/node_modules/ws'));

const args = { url: '', token: '', clients: 100, topic: 'bench', seconds: 10, idle: false, sse: false };
for (let i = 2; i < process.argv.length; i++) {
  const name = process.argv[i].replace(/^--/, '');
  if (name === 'idle' || name === 'sse') args[name] = true;
  else args[name] = process.argv[++i];
}
args.clients = Number(args.clients);
args.seconds = Number(args.seconds);

const NS = '/notifications';
const EVENT = Buffer.from(`42${NS},["notification`);
const T_KEY = Buffer.from('"t":');
const target = args.url.replace(/^http/, 'ws') + '/socket.io/?EIO=4&transport=websocket';
const histogram = new Map(); // whole ms -> count
let deliveries = 0;
let slowest = null;
const perClient = [];
let ready = 0;
let measuring = false;
const sockets = [];

function open(index) {
  return new Promise((resolve) => {
    const ws = new WebSocket(target, { perMessageDeflate: false });
    let stage = 0;
    let counted = 0;
    ws.on('message', (buffer) => {
      if (stage === 3) {
        if (buffer.length === 1 && buffer[0] === 0x32) { ws.send('3'); return; } // ping
        if (!measuring || buffer.compare(EVENT, 0, EVENT.length, 0, EVENT.length) !== 0) return;
        const now = Date.now();
        for (let at = buffer.indexOf(T_KEY); at !== -1; at = buffer.indexOf(T_KEY, at + 4)) {
          const latency = now - parseFloat(buffer.toString('latin1', at + 4, at + 28));
          const bucket = Math.max(0, Math.floor(latency));
          histogram.set(bucket, (histogram.get(bucket) || 0) + 1);
          if (slowest === null || latency > slowest) slowest = latency;
          deliveries++;
          counted++;
        }
        return;
      }
      const message = buffer.toString();
      if (message === '2') { ws.send('3'); return; }
      if (stage === 0 && message[0] === '0') {
        stage = 1;
        ws.send(`40${NS},` + JSON.stringify({ token: args.token }));
      } else if (stage === 1 && message.startsWith(`40${NS}`)) {
        stage = 2;
        ws.send(`42${NS},1["subscribe",` + JSON.stringify({ topics: [args.topic] }) + ']');
      } else if (stage === 2 && message.startsWith(`43${NS},1`)) {
        stage = 3;
        ready++;
        resolve();
      }
    });
    ws.on('close', () => { perClient[index] = counted; });
    ws.on('error', () => resolve());
    ws.counted = () => counted;
    sockets[index] = ws;
  });
}

// --sse: a Server-Sent Events client of GET /api/stream instead (the user's own
// subscriptions decide what it gets); ready once the server says `replayed`.
function countTimes(text) {
  const now = Date.now();
  let found = 0;
  for (let at = text.indexOf('"t":'); at !== -1; at = text.indexOf('"t":', at + 4)) {
    const latency = now - parseFloat(text.slice(at + 4, at + 28));
    const bucket = Math.max(0, Math.floor(latency));
    histogram.set(bucket, (histogram.get(bucket) || 0) + 1);
    if (slowest === null || latency > slowest) slowest = latency;
    deliveries++;
    found++;
  }
  return found;
}

function openStream(index) {
  return new Promise((resolve) => {
    let counted = 0;
    let live = false;
    const request = http.get(args.url + '/api/stream', {
      agent: false,
      headers: { Authorization: 'Bearer ' + args.token, Accept: 'text/event-stream' },
    }, (response) => {
      response.setEncoding('latin1');
      response.on('data', (chunk) => {
        if (!live) {
          if (chunk.indexOf('event: replayed') === -1) return;
          live = true;
          ready++;
          resolve();
          return;
        }
        if (measuring) counted += countTimes(chunk);
      });
      response.on('end', () => { perClient[index] = counted; });
    });
    request.on('error', () => resolve());
    sockets[index] = { counted: () => counted, terminate: () => request.destroy() };
  });
}

async function main() {
  for (let start = 0; start < args.clients; start += 100) {
    const batch = [];
    for (let i = start; i < Math.min(args.clients, start + 100); i++) {
      batch.push(args.sse ? openStream(i) : open(i));
    }
    await Promise.all(batch);
  }
  process.stderr.write(`ready ${ready}\n`);
  const started = Date.now();
  measuring = true;
  await new Promise((resolve) => {
    if (!args.idle) setTimeout(resolve, args.seconds * 1000);
    process.on('SIGTERM', resolve);
    process.on('SIGINT', resolve);
  });
  measuring = false;
  const seconds = (Date.now() - started) / 1000;
  const counts = sockets.map((ws) => ws.counted());
  const buckets = [...histogram.entries()].sort((a, b) => a[0] - b[0]);
  const pct = (p) => {
    let seen = 0;
    for (const [ms, count] of buckets) {
      seen += count;
      if (seen > p * (deliveries - 1)) return ms;
    }
    return null;
  };
  process.stdout.write(JSON.stringify({
    clients: ready, deliveries, deliveries_per_s: deliveries / seconds,
    seconds, p50_ms: pct(0.5), p99_ms: pct(0.99), max_ms: slowest,
    fewest_per_client: counts.length ? Math.min(...counts) : 0,
    histogram: Object.fromEntries(buckets),
  }) + '\n');
  for (const ws of sockets) ws.terminate();
  process.exit(0);
}

main();
