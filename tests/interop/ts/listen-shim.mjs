// Preload (`node --import`) for servers whose port and address we cannot choose from the
// command line (server-everything listens on $PORT on every interface): every TCP listen
// binds 127.0.0.1 on a free port instead, and the port it got is printed on stderr as
// `listen-shim: listening on 127.0.0.1:PORT`.

import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const isTcp = typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))
    || (first && typeof first === 'object' && 'port' in first);
  if (!isTcp) return listen.apply(this, args);
  const callback = args.find((a) => typeof a === 'function');
  this.once('listening', () => {
    const { address, port } = this.address();
    process.stderr.write(`listen-shim: listening on ${address}:${port}\n`);
  });
  return callback ? listen.call(this, 0, '127.0.0.1', callback) : listen.call(this, 0, '127.0.0.1');
};
