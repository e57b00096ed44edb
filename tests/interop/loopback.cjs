// Keeps a Node process's TCP servers on loopback. Preload it:
//
//     node --require /path/to/loopback.cjs app.js
//     NODE_OPTIONS='--require /path/to/loopback.cjs' node app.js
//
// Every listen() that would bind a wildcard address (no host, 0.0.0.0, ::) binds 127.0.0.1
// instead; listens on another address, a file descriptor or a pipe are left alone. The
// interop tests (tests/interop) and the conformance harness (conformance/run.py) preload it
// into the Node peers they start, which would otherwise listen on every interface.
//
// It wraps net.Server.prototype._listen2, Node's internal step that creates and binds a
// server's handle (http, https and net servers all go through it), called as
// _listen2(address, port, addressType, backlog, fd, flags). The bind stays synchronous, so
// server.address() right after listen(0) answers as before. If a Node release drops that
// internal, this file exits the process with status 1 rather than let wildcard binds
// through.
'use strict';

const net = require('node:net');

const MARK = Symbol.for('mcp-sansio.loopback');
const LOOPBACK = '127.0.0.1';
// The spellings of "every interface" a listen() can reach _listen2 with (a lookup of the
// host has already happened; no host at all arrives as null).
const WILDCARDS = new Set(['0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0']);
// libuv's UV_TCP_IPV6ONLY: libuv refuses it on an IPv4 bind (EINVAL), so it is dropped
// along with the IPv6 wildcard.
const UV_TCP_IPV6ONLY = 1;

function isWildcard(address) {
  return address === null || address === undefined || address === '' || WILDCARDS.has(address);
}

const proto = net.Server.prototype;
const original = proto._listen2;

if (typeof original !== 'function') {
  process.stderr.write(
    `loopback.cjs: net.Server.prototype._listen2 is missing in Node ${process.version}; ` +
      'cannot keep TCP listens on 127.0.0.1, so refusing to run\n',
  );
  process.exit(1);
}

if (!original[MARK]) {
  const listenOnLoopback = function _listen2(address, port, addressType, backlog, fd, flags) {
    // A handle that already exists (sent over IPC) or a file descriptor binds nothing here.
    if (!this._handle && typeof fd !== 'number' && isWildcard(address)) {
      address = LOOPBACK;
      addressType = 4;
      if (typeof flags === 'number') {
        flags &= ~UV_TCP_IPV6ONLY;
      }
    }
    return original.call(this, address, port, addressType, backlog, fd, flags);
  };
  listenOnLoopback[MARK] = true;
  proto._listen2 = listenOnLoopback;
}
