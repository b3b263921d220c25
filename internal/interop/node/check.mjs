// Node services verify Latchkey tokens with the libraries they use, against
// the example server: jsonwebtoken + jwks-rsa an RS256 project's tokens
// (they cannot verify EdDSA), jose an EdDSA project's, each with the issuer
// and audience of its project's discovery document. A token of the other
// project must fail. Any failure exits non-zero.
//
// Run from this folder after `npm ci`: `node check.mjs`. It builds the
// example server (go build), or runs LATCHKEY_SERVER_BIN when set, on a
// free port with a temporary -data directory.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';

import jwt from 'jsonwebtoken';
import jwksClient from 'jwks-rsa';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

// --- The snippets the README shows (kept identical by a Go test). ---

// README: jsonwebtoken + jwks-rsa (RS256 project)
function verifyRS256(token, { issuer, jwksUri, audience }) {
  const client = jwksClient({ jwksUri });
  const getKey = (header, callback) =>
    client.getSigningKey(header.kid).then((key) => callback(null, key.getPublicKey()), callback);
  return new Promise((ok, fail) =>
    jwt.verify(token, getKey, { algorithms: ['RS256'], issuer, audience },
      (err, claims) => (err ? fail(err) : ok(claims))));
}
// end README

// README: jose (any algorithm)
async function verifyWithJose(token, discoveryUrl, audience) {
  const discovery = await (await fetch(discoveryUrl)).json(); // a service: once, at start
  const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri)); // likewise; it caches the keys
  const { payload } = await jwtVerify(token, jwks, { issuer: discovery.issuer, audience });
  return payload;
}
// end README

// --- The example server. ---

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

function serverBinary(dir) {
  if (process.env.LATCHKEY_SERVER_BIN) return process.env.LATCHKEY_SERVER_BIN;
  const bin = join(dir, 'server');
  execFileSync('go', ['build', '-o', bin, './examples/server'], { cwd: repo, stdio: 'inherit' });
  return bin;
}

// cli runs a command of the example server on the data directory and
// returns its JSON output lines.
function cli(bin, data, args, stdin = '') {
  const [group, verb, ...rest] = args;
  const out = execFileSync(bin, [group, verb, '-data', data, ...rest], { input: stdin, encoding: 'utf8' });
  return out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

function serve(bin, data, addr, publicUrl) {
  const child = spawn(bin, ['serve', '-addr', addr, '-data', data, '-public-url', publicUrl], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (b) => { stderr = (stderr + b).slice(-4000); });
  const listening = new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not listen in 30 s:\n${stderr}`)), 30000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        if (JSON.parse(line).event === 'listening') { clearTimeout(timer); ok(); }
      } catch { /* not JSON */ }
    });
    child.on('exit', (code) => { clearTimeout(timer); fail(new Error(`server exited (${code}):\n${stderr}`)); });
  });
  return { child, listening };
}

async function login(base, email, password) {
  const res = await fetch(`${base}/v1/identity/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  assert.equal(res.status, 200, `login at ${base}: ${res.status}`);
  return (await res.json()).access_token;
}

async function rejects(what, promise) {
  try {
    await promise;
  } catch {
    return;
  }
  throw new Error(`${what}: accepted, want refused`);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'latchkey-node-'));
  let server;
  try {
    const bin = serverBinary(dir);
    const data = join(dir, 'data');
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;

    // Two projects, by the CLI, before the server starts.
    cli(bin, data, ['project', 'create', '-alg', 'RS256', 'rsa-project']);
    cli(bin, data, ['project', 'create', '-alg', 'EdDSA', 'ed-project']);
    const tokens = {};
    for (const p of ['rsa-project', 'ed-project']) {
      cli(bin, data, ['user', 'create', '-project', p, '-email', 'ann@example.com'], `pw-of-ann-${p}\n`);
      tokens[p] = {
        key: cli(bin, data, ['key', 'create', '-project', p, '-name', 'node', '-public-url', publicUrl])[0].token,
      };
    }

    const s = serve(bin, data, `127.0.0.1:${port}`, publicUrl);
    server = s.child;
    await s.listening;
    const discoveries = {};
    for (const p of Object.keys(tokens)) {
      tokens[p].login = await login(`${publicUrl}/p/${p}`, 'ann@example.com', `pw-of-ann-${p}`);
      discoveries[p] = await (await fetch(`${publicUrl}/p/${p}/.well-known/openid-configuration`)).json();
    }
    const rs = discoveries['rsa-project'];
    assert.deepEqual(rs.id_token_signing_alg_values_supported, ['RS256']);
    assert.deepEqual(discoveries['ed-project'].id_token_signing_alg_values_supported, ['EdDSA']);

    // jsonwebtoken + jwks-rsa: the RS256 project's login token and API key.
    const rsSettings = { issuer: rs.issuer, jwksUri: rs.jwks_uri, audience: 'rsa-project' };
    for (const kind of ['login', 'key']) {
      const claims = await verifyRS256(tokens['rsa-project'][kind], rsSettings);
      assert.equal(claims.aud, 'rsa-project');
      assert.match(claims.sub, kind === 'login' ? /^usr_/ : /^key_/);
      console.log(`ok: jsonwebtoken + jwks-rsa verify the RS256 project's ${kind === 'login' ? 'login token' : 'API key'}`);
    }
    await rejects('the EdDSA project\'s token with the RS256 project\'s settings',
      verifyRS256(tokens['ed-project'].login, rsSettings));

    // jose: the EdDSA project's login token and API key, from discovery.
    const edDiscovery = `${publicUrl}/p/ed-project/.well-known/openid-configuration`;
    for (const kind of ['login', 'key']) {
      const claims = await verifyWithJose(tokens['ed-project'][kind], edDiscovery, 'ed-project');
      assert.equal(claims.iss, `${publicUrl}/p/ed-project`);
      assert.match(claims.sub, kind === 'login' ? /^usr_/ : /^key_/);
      console.log(`ok: jose verifies the EdDSA project's ${kind === 'login' ? 'login token' : 'API key'}`);
    }
    // jose verifies RS256 as well, and keeps projects apart.
    await verifyWithJose(tokens['rsa-project'].login,
      `${publicUrl}/p/rsa-project/.well-known/openid-configuration`, 'rsa-project');
    await rejects('the RS256 project\'s token with the EdDSA project\'s settings',
      verifyWithJose(tokens['rsa-project'].login, edDiscovery, 'ed-project'));
    console.log('ok: a token of one project fails with the other\'s settings');
  } finally {
    if (server && server.exitCode === null) {
      const exited = new Promise((ok) => server.once('exit', ok));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(`node interop check failed: ${err.stack || err}`);
  process.exit(1);
});
