// A crowd of real browser clients for a reconnect storm: N copies of Herald's own
// client (clients/js/herald.js, with socket.io-client) in one Node process.
//
// herald.js runs unchanged, against a stand-in for `window`, so its reconnect
// backoff (full jitter, a busy server's retry_after) is the one measured. Beside
// each client's own handlers, this records what its socket receives, before the
// client drops anything as a duplicate: every notification id (in arrival order,
// and whether it came in a replay or live), every `replayed`, every connect
// attempt with the last_id it sent, every refusal.
//
//   node bench/storm.js --url http://127.0.0.1:5000 --tokens T1,T2 --clients 500 [--plain 1]
//
// With --plain 1 the clients are plain socket.io-clients instead: each sends its
// newest id as last_id and retries every 0.5 s, ignoring retry_after.
//
// Client i uses token i mod the number of tokens. The clients connect in batches
// of --batch; "ready N" is printed once all have been replayed to (live). Then
// commands on stdin, one a line, each answered by one JSON line on stdout:
//
//   status [ID]      how many are connected, live, live again since `mark`, and
//                    (with ID) how many have received ID
//   mark             the web process is about to be killed: from now on, count
//                    attempts (and check each sends the newest id received as
//                    last_id), refusals, and each client's first `replayed`
//   restarted MS     the new process starts at MS (epoch ms): live receipts of
//                    notifications published from then on are the storm's
//   check PATH       compare what each client received with the ids in PATH (a
//                    JSON list, in publish order): gaps, duplicates, order; and the
//                    figures of the storm
//   quit             close every client and exit
'use strict';

const fs = require('fs');
const path = require('path');
const readline = require('readline');

const ROOT = path.join(__dirname, '..');
const io = require(path.join(ROOT, 'node_modules/socket.io-client'));

const args = { url: '', tokens: '', clients: 100, batch: 250, base: 500, cap: 5000, plain: '0' };
for (let i = 2; i < process.argv.length; i += 2) {
  args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
}
const tokens = args.tokens.split(',').filter(Boolean);
const total = Number(args.clients);

// herald.js expects a browser's window: these are all of it that it touches.
const fakeWindow = {
  URL, atob, io,
  location: { href: args.url + '/' },
  navigator: { onLine: true },
  addEventListener() {},
  removeEventListener() {},
};
// The client of the Herald under test (HERALD_SERVER_ROOT: bin/bench_compare.py), when it has one.
const serverClient = path.join(process.env.HERALD_SERVER_ROOT || ROOT, 'clients/js/herald.js');
const clientFile = fs.existsSync(serverClient) ? serverClient : path.join(ROOT, 'clients/js/herald.js');
new Function('window', fs.readFileSync(clientFile, 'utf8'))(fakeWindow);
const Herald = fakeWindow.Herald;

// "<ms>-<seq>" as one exact number (seq < 1000 in a benchmark), so that thousands
// of clients can keep every id they received in arrays of doubles.
function idNumber(id) {
  const dash = id.indexOf('-');
  return Number(id.slice(0, dash)) * 1000 + Number(id.slice(dash + 1));
}

let markedAt = null;
let restartedAt = null;
const stormT = [];        // publish time (ms) of each live receipt published after the restart
const stormLatency = [];  // and its delay, receipt minus publish (ms)
const calmLatency = [];   // the delays of live receipts before the kill: this harness's baseline

class Probe {
  constructor(index) {
    this.index = index;
    this.ids = [];            // every notification id received, as numbers, in order
    this.live = false;        // replayed to on the current connection
    this.connected = false;
    this.everLive = false;
    this.lastId = null;       // the newest id received (string)
    this.attemptsAfterMark = 0;
    this.wrongLastId = 0;     // attempts whose last_id was not the newest id received
    this.busy = 0;            // refusals "unavailable: busy" after the mark
    this.otherErrors = 0;     // connects that failed otherwise (no server yet)
    this.retryAfterMax = 0;
    this.backAt = null;       // time of the first `replayed` after the mark
    this.attemptAt = null;    // time of the latest connect attempt
    this.backAttemptAt = null;  // time of the attempt that brought it back
    this.backCount = null;    // and how many it replayed
    this.backRecovered = null;
    this.relapses = 0;        // replays after that one (it was lost again after coming back)
    this.firstStormLive = null;  // publish time of its first live receipt published after the restart
    if (args.plain === '1') {
      this.plain(tokens[index % tokens.length]);
      return;
    }
    this.client = Herald.connect({
      url: args.url, token: tokens[index % tokens.length], transports: ['websocket'],
      reconnectionDelay: Number(args.base), reconnectionDelayMax: Number(args.cap),
    });
    this.client.on('error', () => {});  // refused for good: shows in the check
    this.client.opened.then((socket) => this.watch(socket));
  }

  // A plain Socket.IO client, not herald.js: it sends its newest id as last_id,
  // retries every 0.5 s on its own schedule (no jitter) and never reads retry_after.
  plain(token) {
    const socket = io(args.url + '/notifications', {
      transports: ['websocket'], reconnectionDelay: 500, reconnectionDelayMax: 500,
      randomizationFactor: 0,
      auth: (callback) => callback(this.lastId === null ? { token } : { token, last_id: this.lastId }),
    });
    this.watch(socket);
    const again = () => setTimeout(() => { if (!socket.connected && !socket.active) socket.connect(); }, 500);
    socket.on('connect_error', again);  // refused by the server: socket.io-client gives up
    socket.on('disconnect', (reason) => { if (reason === 'io server disconnect') again(); });
    this.client = { close: () => socket.close() };
  }

  watch(socket) {
    const send = socket.auth;
    socket.auth = (callback) => send((auth) => {
      this.attemptAt = Date.now();
      if (markedAt !== null) {
        this.attemptsAfterMark++;
        if ((auth.last_id || null) !== this.lastId) this.wrongLastId++;
      }
      callback(auth);
    });
    socket.on('connect', () => { this.connected = true; this.live = false; });
    socket.on('disconnect', () => { this.connected = false; this.live = false; });
    socket.on('connect_error', (error) => {
      if (markedAt === null) return;
      if (/^unavailable: busy/.test(error.message)) {
        this.busy++;
        const hint = Number(error.data && error.data.retry_after) || 0;
        if (hint > this.retryAfterMax) this.retryAfterMax = hint;
      } else {
        this.otherErrors++;
      }
    });
    socket.on('notification', (envelope) => this.receive([envelope]));
    socket.on('notifications', (list) => this.receive(list));
    socket.on('replayed', (outcome) => {
      this.live = true;
      this.everLive = true;
      if (markedAt !== null && this.backAt !== null) this.relapses++;
      if (markedAt !== null && this.backAt === null) {
        this.backAt = Date.now();
        this.backAttemptAt = this.attemptAt;
        this.backCount = outcome.count;
        this.backRecovered = outcome.recovered;
      }
    });
  }

  receive(list) {
    const now = Date.now();
    for (const envelope of list) {
      this.ids.push(idNumber(envelope.id));
      this.lastId = envelope.id;
      const t = envelope.data && envelope.data.t;
      if (this.live && markedAt === null && typeof t === 'number') calmLatency.push(now - t);
      if (this.live && restartedAt !== null && typeof t === 'number' && t >= restartedAt) {
        stormT.push(t);
        stormLatency.push(now - t);
        if (this.firstStormLive === null) this.firstStormLive = t;
      }
    }
  }
}

const probes = [];

function counts(id) {
  const wanted = id ? idNumber(id) : null;
  let connected = 0, live = 0, back = 0, have = 0;
  for (const p of probes) {
    if (p.connected) connected++;
    if (p.live) live++;
    if (p.backAt !== null) back++;
    if (wanted !== null && p.ids.length && p.ids[p.ids.length - 1] >= wanted) have++;
  }
  return { clients: probes.length, connected, live, back, have };
}

function percentile(sorted, fraction) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.round(fraction * (sorted.length - 1)))];
}

function check(file) {
  const expected = JSON.parse(fs.readFileSync(file, 'utf8')).map(idNumber);
  const expectedSet = new Set(expected);
  const bad = [];
  // Over every client: expected ids it lacks, ids it got twice, and ids it got that
  // are not expected (published, but never acknowledged to their publisher).
  let missingTotal = 0, duplicateTotal = 0, extraTotal = 0;
  for (const p of probes) {
    const seen = new Set(p.ids);
    duplicateTotal += p.ids.length - seen.size;
    for (const id of expected) if (!seen.has(id)) missingTotal++;
    for (const id of seen) if (!expectedSet.has(id)) extraTotal++;
  }
  let wrongLastId = 0, notBack = 0, notRecovered = 0, busy = 0, attempts = 0, refusedClients = 0;
  let otherErrors = 0, retryAfterMax = 0, lastBack = null, firstBack = null;
  let relapsed = 0, stormLiveClients = 0;
  for (const p of probes) {
    const ids = p.ids;
    let same = ids.length === expected.length;
    for (let i = 0; same && i < ids.length; i++) same = ids[i] === expected[i];
    if (!same) {
      const seen = new Set(ids);
      bad.push({ client: p.index, received: ids.length, distinct: seen.size,
                 missing: expected.filter((id) => !seen.has(id)).length });
    }
    if (p.wrongLastId || !p.attemptsAfterMark) wrongLastId++;
    if (p.backAt === null) notBack++;
    else {
      if (lastBack === null || p.backAt > lastBack) lastBack = p.backAt;
      if (firstBack === null || p.backAt < firstBack) firstBack = p.backAt;
    }
    if (p.backRecovered === false) notRecovered++;
    if (p.relapses) relapsed++;
    busy += p.busy;
    if (p.busy) refusedClients++;
    attempts += p.attemptsAfterMark;
    otherErrors += p.otherErrors;
    retryAfterMax = Math.max(retryAfterMax, p.retryAfterMax);
  }
  // Live deliveries of what was published during the storm (from the restart
  // until the last client was live again), to the clients already back.
  for (const p of probes) {
    if (p.firstStormLive !== null && lastBack !== null && p.firstStormLive <= lastBack) stormLiveClients++;
  }
  const during = [];
  for (let i = 0; i < stormT.length; i++) {
    if (lastBack !== null && stormT[i] <= lastBack) during.push(stormLatency[i]);
  }
  during.sort((a, b) => a - b);
  calmLatency.sort((a, b) => a - b);
  // When the clients came back (from the restart), when they made the attempt that
  // brought them back, and how long that attempt took: waiting out a backoff
  // window, or being served.
  const back = [], tried = [], served = [];
  for (const p of probes) {
    if (p.backAt === null || p.backAttemptAt === null) continue;
    back.push(p.backAt - restartedAt);
    tried.push(p.backAttemptAt - restartedAt);
    served.push(p.backAt - p.backAttemptAt);
  }
  const deciles = (values) => {
    values.sort((a, b) => a - b);
    return [0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1].map((f) => percentile(values, f));
  };
  return {
    clients: probes.length, expected: expected.length, mismatched: bad.length, examples: bad.slice(0, 5),
    missing_total: missingTotal, duplicate_total: duplicateTotal, unexpected_total: extraTotal,
    wrong_last_id: wrongLastId, not_back: notBack, not_recovered: notRecovered, relapsed,
    storm_live_clients: stormLiveClients,
    busy_refusals: busy, clients_refused_busy: refusedClients, other_connect_errors: otherErrors,
    attempts_after_kill: attempts, retry_after_max_s: retryAfterMax,
    first_back_ms: firstBack === null ? null : firstBack - restartedAt,
    all_back_ms: lastBack === null ? null : lastBack - restartedAt,
    storm_live_deliveries: during.length,
    storm_live_p50_ms: percentile(during, 0.5), storm_live_p99_ms: percentile(during, 0.99),
    storm_live_max_ms: during.length ? during[during.length - 1] : null,
    calm_live_deliveries: calmLatency.length, calm_live_p50_ms: percentile(calmLatency, 0.5),
    calm_live_p99_ms: percentile(calmLatency, 0.99),
    calm_live_max_ms: calmLatency.length ? calmLatency[calmLatency.length - 1] : null,
    // [p10, p25, p50, p75, p90, p99, max], ms
    back_ms_deciles: deciles(back), attempt_ms_deciles: deciles(tried),
    served_ms_deciles: deciles(served),
  };
}

function answer(value) {
  process.stdout.write(JSON.stringify(value) + '\n');
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function main() {
  const batch = Number(args.batch);
  for (let start = 0; start < total; start += batch) {
    for (let i = start; i < Math.min(total, start + batch); i++) probes.push(new Probe(i));
    for (let waited = 0; waited < 60000 && probes.some((p) => !p.everLive); waited += 50) {
      await sleep(50);
    }
  }
  process.stdout.write(`ready ${probes.filter((p) => p.everLive).length}\n`);
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const [command, value] = line.trim().split(/\s+/);
    if (command === 'status') answer(counts(value));
    else if (command === 'mark') {
      markedAt = Date.now();
      answer({ marked: markedAt });
    } else if (command === 'restarted') {
      restartedAt = Number(value);
      answer({ restarted: restartedAt });
    } else if (command === 'check') answer(check(value));
    else if (command === 'quit') break;
    else answer({ error: `unknown command ${command}` });
  }
  for (const p of probes) p.client.close();
  process.exit(0);
}

main();
