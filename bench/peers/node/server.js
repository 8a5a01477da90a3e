// Peer (b): a Node.js Socket.IO 4 server relaying Redis pub/sub to /notifications.
//
// One Redis subscription to herald:live for the process; each notification is
// emitted to the rooms of its topic's prefixes (or its owner's room), as
// Herald does. Any token is accepted; `subscribe` joins rooms and acks.
//
//     REDIS_URL=redis://127.0.0.1:6379 PORT=5102 node bench/peers/node/server.js
'use strict';

const http = require('http');
const { Server } = require('socket.io');
const { createClient } = require('redis');

function prefixes(topic) {
  const parts = topic.split('.');
  const found = ['*'];
  for (let i = 1; i <= parts.length; i++) found.push(parts.slice(0, i).join('.'));
  return found;
}

async function main() {
  const server = http.createServer();
  const io = new Server(server, { serveClient: false });
  const notifications = io.of('/notifications');
  notifications.on('connection', (socket) => {
    const topics = new Set();
    socket.on('subscribe', (payload, ack) => {
      for (const topic of payload.topics) {
        topics.add(topic);
        socket.join('t:' + topic);
      }
      if (typeof ack === 'function') ack({ ok: true, topics: [...topics].sort() });
    });
  });
  const subscriber = createClient({ url: process.env.REDIS_URL });
  await subscriber.connect();
  await subscriber.subscribe('herald:live', (message) => {
    const envelope = JSON.parse(message);
    const rooms = envelope.user ? ['u:' + envelope.user] : prefixes(envelope.topic).map((p) => 't:' + p);
    notifications.to(rooms).emit('notification', envelope);
  });
  server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
}

main().catch((error) => { console.error(error); process.exit(1); });
