/**
 * The few lines every program the stack's Jobs run needs to talk to the API server as an
 * in-cluster client: the ServiceAccount's token and CA, `KUBERNETES_SERVICE_HOST`/`_PORT`. Plain
 * JavaScript for Node.js 18 or later with no dependencies, spliced into each Job's program text
 * (`_registry-credentials-script.ts`, `_build-mode-cleanup-script.ts`), so that the programs stay
 * one file each that a stock `node` image runs.
 *
 * It defines `log(message, fields)` (one JSON line on stdout), `inClusterOptions(timeoutMs)` and
 * `request(options, method, urlPath, body)`, which resolves `{ status, body, text }` (`body` is the
 * parsed JSON answer, `undefined` when it is not JSON) and rejects only when no answer came.
 */
export const IN_CLUSTER_CLIENT_SCRIPT = String.raw`const fs = require('node:fs');
const https = require('node:https');
const path = require('node:path');

function log(message, fields) {
  process.stdout.write(JSON.stringify(Object.assign({ msg: message }, fields || {})) + '\n');
}

function inClusterOptions(timeoutMs) {
  const saDir = process.env.SERVICE_ACCOUNT_DIR || '/var/run/secrets/kubernetes.io/serviceaccount';
  const host = process.env.KUBERNETES_SERVICE_HOST;
  if (!host) throw new Error('environment variable KUBERNETES_SERVICE_HOST is required');
  return {
    host,
    port: Number(process.env.KUBERNETES_SERVICE_PORT || '443'),
    token: fs.readFileSync(path.join(saDir, 'token'), 'utf8').trim(),
    ca: fs.readFileSync(path.join(saDir, 'ca.crt')),
    timeoutMs,
  };
}

function request(options, method, urlPath, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request({
      host: options.host,
      port: options.port,
      path: urlPath,
      method,
      ca: options.ca,
      timeout: options.timeoutMs,
      headers: Object.assign(
        { Authorization: 'Bearer ' + options.token, Accept: 'application/json' },
        payload === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
      ),
    }, res => {
      const chunks = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try { json = JSON.parse(text); } catch (e) { json = undefined; }
        resolve({ status: res.statusCode, body: json, text });
      });
    });
    req.on('timeout', () => req.destroy(new Error(method + ' ' + urlPath + ' timed out')));
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
`;
