// A real authorization server for the authorization interop tests: oidc-provider (a
// certified OpenID Provider and OAuth 2.0 authorization server), installed by peers.py into
// .interop/oidc, configured for an MCP server and run on 127.0.0.1.
//
//   node oidc_provider.mjs PACKAGE_DIR [--resource URI]... [--port N] [--mount PATH]
//                          [--client JSON]...
//
// PACKAGE_DIR is the oidc-provider package folder (.interop/oidc/node_modules/oidc-provider;
// this script lives outside it, so it imports the package by path). It listens on
// 127.0.0.1 (port N, default any free one) and, once listening, prints one JSON line to
// stdout: {"issuer": "http://127.0.0.1:PORT"}. With --mount PATH (such as /oidc) the
// provider is mounted there, so the issuer has that path; everything outside it is 404
// (logged as {"method", "path", "status": 404, "outside": true}). Each --client is the
// metadata of a pre-registered client (client_id, client_secret, redirect_uris,
// token_endpoint_auth_method...). Each request is logged to stderr as a JSON
// line once answered: {"method", "path", "status", and where the request had them
// "grant_type", "resource", "scope", "client_id", "authorization" (the scheme only, never
// a credential)}.
//
// The configuration, feature by feature:
// - dynamic client registration (RFC 7591) open, no initial access token;
// - PKCE required for every client (oidc-provider takes S256 only);
// - resource indicators (RFC 8707): each --resource URI (default: any http URL on
//   127.0.0.1) is a resource server with the scopes mcp:read and mcp:write, whose access
//   tokens are JWTs (RFC 9068) with that URI as audience;
// - the client credentials grant (OAuth 2.1 section 4.2), for a pre-registered --client
//   allowed it (grant_types ["client_credentials"]), its token for the resource named;
// - refresh tokens for every client allowed the refresh_token grant, rotated on each use
//   (oidc-provider's default rotates a public client's);
// - the authorization response carries iss (RFC 9207; oidc-provider always sends it and
//   says so in its metadata);
// - the development interactions (login and consent forms) on: the tests submit them over
//   HTTP (any login and password sign in; the consent form grants what is missing).
// The issuer is http on loopback: oidc-provider serves it (Koa's ctx.secure is false, so its
// cookies are not Secure), and takes http loopback redirect URIs for native clients.

import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// each step of the start is marked on stderr (lines not starting with "{", so the request
// log skips them), for a start that does not finish: its log shows the last step reached
const started = Date.now();
function mark(step) {
  process.stderr.write(`oidc_provider.mjs: ${step} after ${Date.now() - started} ms\n`);
}
mark('running');

const args = process.argv.slice(2);
if (args.length < 1) {
  process.stderr.write('usage: node oidc_provider.mjs PACKAGE_DIR [--resource URI]... [--port N]\n');
  process.exit(2);
}
const packageDir = args[0];
const resources = [];
let port = 0;
let mount = '';
const clients = [];
for (let i = 1; i < args.length; i += 2) {
  if (args[i] === '--resource') resources.push(args[i + 1]);
  else if (args[i] === '--port') port = Number(args[i + 1]);
  else if (args[i] === '--client') clients.push(JSON.parse(args[i + 1]));
  else if (args[i] === '--mount') mount = args[i + 1].replace(/\/$/, '');
  else {
    process.stderr.write(`unknown argument ${args[i]}\n`);
    process.exit(2);
  }
}

const { default: Provider } = await import(pathToFileURL(path.join(packageDir, 'lib', 'index.js')).href);
mark('imported oidc-provider');

const SCOPES = 'mcp:read mcp:write';

function isResource(uri) {
  if (resources.length) return resources.includes(uri);
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' && url.hostname === '127.0.0.1' && !url.hash;
  } catch {
    return false;
  }
}

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'interop-rs256', alg: 'RS256', use: 'sig' };
mark('made the signing key');

let provider;
const server = http.createServer((req, res) => {
  if (mount) {
    const { pathname } = new URL(req.url, 'http://127.0.0.1');
    if (pathname !== mount && !pathname.startsWith(`${mount}/`)) {
      process.stderr.write(`${JSON.stringify({ method: req.method, path: pathname, status: 404, outside: true })}\n`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not_found"}');
      return;
    }
    // as a framework's mount does: oidc-provider reads its mount path from originalUrl
    req.originalUrl = req.url;
    req.url = req.url.slice(mount.length) || '/';
  }
  provider.callback()(req, res);
});

server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}${mount}`;
  provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients,
    cookies: { keys: ['interop-cookie-key-not-a-secret'] },
    // the resource's scopes are the server's too: a client's registered scope (RFC 7591 2,
    // the Python SDK sends one) must hold only scopes the server lists
    scopes: ['openid', 'offline_access', 'mcp:read', 'mcp:write'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    },
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    pkce: { required: () => true },
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: () => true,
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      Grant: 3600,
      IdToken: 600,
      Interaction: 600,
      RefreshToken: 3600,
      Session: 3600,
    },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (ctx, client, oneOf) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resourceIndicator) => {
          if (!isResource(resourceIndicator)) throw new provider.constructor.errors.InvalidTarget();
          return {
            scope: SCOPES,
            audience: resourceIndicator,
            accessTokenTTL: 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  });
  provider.use(async (ctx, next) => {
    await next();
    const line = { method: ctx.method, path: `${mount}${ctx.path}`, status: ctx.status };
    const auth = ctx.get('authorization');
    if (auth) line.authorization = auth.split(' ')[0];
    // what the client sent (the query, or the form body), not what the provider made of it
    const sent = ctx.method === 'POST' ? (ctx.oidc?.body ?? {}) : ctx.query;
    for (const name of ['grant_type', 'resource', 'scope', 'client_id']) {
      if (sent[name] !== undefined) line[name] = sent[name];
    }
    const granted = ctx.oidc?.params?.scope;
    if (granted !== undefined && granted !== sent.scope) line.scope_kept = granted;
    process.stderr.write(`${JSON.stringify(line)}\n`);
  });
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
  mark('listening');
});

function stop() {
  server.close();
  server.closeAllConnections?.();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// the test's end closes our stdin: stop then too, so no server outlives its test
process.stdin.on('end', stop);
process.stdin.resume();
