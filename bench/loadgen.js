// A lean Socket.IO load generator in Node: N websocket clients on /notifications.
//
// Same protocol and output as bench/loadgen.py, for less CPU per message:
// Engine.IO v4 / Socket.IO v5 spoken directly over `ws`. Latency is now minus
// `data.t` (the publisher's wall clock, ms). Prints "ready N" on stderr once
// all are subscribed, measures for --seconds (or until SIGTERM), then one JSON
// object on stdout. --idle only connects and holds until SIGTERM.
//
//   node bench/loadgen.js --url http://127.0.0.1:5000 --token T --clients 1000 --seconds 10
'use strict';

const path = require('path');
const WebSocket = require(path.join(__dirname, 'peers/node/node_modules/ws'));

const args = { url: '', token: '', clients: 100, topic: 'bench', seconds: 10, idle: false };
for (let i = 2; i < process.argv.length; i++) {
  const name = process.argv[i].replace(/^--/, '');
  if (name === 'idle') args.idle = true;
  else args[name] = process.argv[++i];
}
args.clients = Number(args.clients);
args.seconds = Number(args.seconds);

const NS = '/notifications';
const ONE = `42${NS},["notification",`;
const MANY = `42${NS},["notifications",`;
const target = args.url.replace(/^http/, 'ws') + '/socket.io/?EIO=4&transport=websocket';
const latencies = [];
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
      } else if (stage === 3 && measuring) {
        const now = Date.now();
        let envelopes;
        if (message.startsWith(ONE)) envelopes = [JSON.parse(message.slice(ONE.length, -1))];
        else if (message.startsWith(MANY)) envelopes = JSON.parse(message.slice(MANY.length, -1));
        else return;
        for (const envelope of envelopes) latencies.push(now - envelope.data.t);
        counted += envelopes.length;
      }
    });
    ws.on('close', () => { perClient[index] = counted; });
    ws.on('error', () => resolve());
    ws.counted = () => counted;
    sockets[index] = ws;
  });
}

async function main() {
  for (let start = 0; start < args.clients; start += 100) {
    const batch = [];
    for (let i = start; i < Math.min(args.clients, start + 100); i++) batch.push(open(i));
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
  latencies.sort((a, b) => a - b);
  const pct = (p) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * (latencies.length - 1)))] : null);
  process.stdout.write(JSON.stringify({
    clients: ready, deliveries: latencies.length, deliveries_per_s: latencies.length / seconds,
    seconds, p50_ms: pct(0.5), p99_ms: pct(0.99), max_ms: latencies.length ? latencies[latencies.length - 1] : null,
    fewest_per_client: counts.length ? Math.min(...counts) : 0,
  }) + '\n');
  for (const ws of sockets) ws.terminate();
  process.exit(0);
}

main();
