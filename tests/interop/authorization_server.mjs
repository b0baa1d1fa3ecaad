// The tests' OAuth 2.1 authorization server: oidc-provider (npm, pinned in package.json), issuing
// signed JWT access tokens (RFC 9068) for toolshelf's resource by client credentials, with
// resource indicators (RFC 8707), so `serve --http --oauth-issuer` is checked against a real
// issuer. Its clients: `alice` (groups eng) and `bob` (groups ops), secrets `<name>-secret`,
// both allowed the scopes `tools` and `other`. Run by Node 22 with NODE_PATH naming the installed
// packages' node_modules.
//
//   node authorization_server.mjs keys             a JWKS of one new RSA private key, on stdout
//   node authorization_server.mjs serve PORT RESOURCE KEYS
//                                                  serves at http://127.0.0.1:PORT, signing with
//                                                  the first key of the JWKS file KEYS; prints
//                                                  `ready ISSUER` once listening
//   node authorization_server.mjs mint KEYS CLAIMS [HEADER]
//                                                  a JWT of the CLAIMS (JSON) signed with the
//                                                  first key of KEYS, its header's fields
//                                                  replaced by HEADER's (JSON): the tests' forged
//                                                  tokens (wrong issuer, audience, time, alg)
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// The packages are installed in NODE_PATH (target/interop/node_modules), which ES modules do not
// search: each is loaded by the file it resolves to there.
const resolve = createRequire(path.join(process.env.NODE_PATH ?? '', 'resolve.js')).resolve;
const load = (name) => import(pathToFileURL(resolve(name)));
const jose = await load('jose');

const [mode, ...rest] = process.argv.slice(2);

if (mode === 'keys') {
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  jwk.kid = crypto.randomUUID();
  jwk.alg = 'RS256';
  jwk.use = 'sig';
  console.log(JSON.stringify({ keys: [jwk] }));
} else if (mode === 'mint') {
  const [keysFile, claims, header] = rest;
  const jwk = JSON.parse(fs.readFileSync(keysFile, 'utf8')).keys[0];
  const protectedHeader = { alg: 'RS256', kid: jwk.kid, typ: 'at+jwt', ...JSON.parse(header ?? '{}') };
  if (protectedHeader.alg === 'none') {
    const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
    console.log(`${part(protectedHeader)}.${part(JSON.parse(claims))}.`);
  } else {
    const key = await jose.importJWK(jwk, 'RS256');
    console.log(await new jose.SignJWT(JSON.parse(claims)).setProtectedHeader(protectedHeader).sign(key));
  }
} else if (mode === 'serve') {
  const [port, resource, keysFile] = rest;
  const { default: Provider } = await load('oidc-provider');
  const issuer = `http://127.0.0.1:${port}`;
  const groups = { alice: ['eng'], bob: ['ops'] };
  const client = (name) => ({
    client_id: name, client_secret: `${name}-secret`,
    grant_types: ['client_credentials'], redirect_uris: [], response_types: [],
    token_endpoint_auth_method: 'client_secret_post', scope: 'tools other',
  });
  const provider = new Provider(issuer, {
    jwks: JSON.parse(fs.readFileSync(keysFile, 'utf8')),
    clients: Object.keys(groups).map(client),
    scopes: ['tools', 'other'],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => ({
          scope: 'tools other', audience: indicator, accessTokenTTL: 300,
          accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    extraTokenClaims: (ctx, token) => ({ groups: groups[token.clientId] ?? [] }),
  });
  http.createServer(provider.callback()).listen(Number(port), '127.0.0.1', () => console.log(`ready ${issuer}`));
} else {
  console.error('usage: authorization_server.mjs keys | serve PORT RESOURCE KEYS | mint KEYS CLAIMS [HEADER]');
  process.exit(2);
}
