import { IN_CLUSTER_CLIENT_SCRIPT } from './_in-cluster-client-script';

/**
 * The program the build-mode clean-up Job runs, shipped to the cluster in a ConfigMap beside the
 * rules it follows (`rules.json`, written by {@link BuildModeCleanup} from {@link buildModeRules}).
 *
 * Plain JavaScript for Node.js 18 or later with no dependencies, so that a stock `node` image runs
 * it; it talks to the API server as every in-cluster client does (the ServiceAccount's token and
 * CA, `KUBERNETES_SERVICE_HOST`). It first waits until no 1.11.1 controller runs (the controller
 * Deployment rolled out to the 1.13.0 image, and no Pod of an older ReplicaSet left), because that
 * controller re-creates the copies it made as soon as they are gone. Then it deletes what the rules
 * name and nothing else, logs each object it deletes or keeps as one JSON line, and ends 0 when
 * nothing failed: on a fresh 1.13.0 install it finds nothing. The tests run this very text against
 * the fake API server behind HTTPS.
 */
export const BUILD_MODE_CLEANUP_SCRIPT = String.raw`'use strict';
// Removes what Kyma Serverless 1.11.1's build mode left behind. Written by cdk8s-kyma-serverless.
${IN_CLUSTER_CLIENT_SCRIPT}
class ApiError extends Error {
  constructor(what, answer) {
    super(what + ': ' + answer.status + ' ' + ((answer.body && answer.body.message) || answer.text.slice(0, 300)));
    this.status = answer.status;
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
const enc = encodeURIComponent;

function collectionPath(rule, namespace) {
  const base = rule.apiVersion.includes('/') ? '/apis/' + rule.apiVersion : '/api/' + rule.apiVersion;
  return base + (namespace === undefined ? '' : '/namespaces/' + enc(namespace)) + '/' + rule.plural;
}

function matchesLabels(object, labels) {
  const actual = (object.metadata && object.metadata.labels) || {};
  return Object.keys(labels || {}).every(key => actual[key] === labels[key]);
}

function ownedByFunction(object, functionGroup) {
  return ((object.metadata && object.metadata.ownerReferences) || [])
    .some(ref => ref.kind === 'Function' && String(ref.apiVersion || '').split('/')[0] === functionGroup);
}

function label(rule, object) {
  return { kind: rule.kind, namespace: object.metadata.namespace, name: object.metadata.name };
}

class Cleanup {
  constructor(options, rules) {
    this.options = options;
    this.rules = rules;
    this.deleted = 0;
    this.kept = 0;
    this.failures = [];
  }

  async call(method, urlPath, body, what) {
    const answer = await request(this.options, method, urlPath, body);
    if (answer.status >= 200 && answer.status < 300) return answer;
    throw new ApiError(what || (method + ' ' + urlPath), answer);
  }

  async list(urlPath, labelSelector) {
    const items = [];
    let cont;
    do {
      const query = ['limit=500'];
      if (labelSelector) query.push('labelSelector=' + enc(labelSelector));
      if (cont) query.push('continue=' + enc(cont));
      const answer = await this.call('GET', urlPath + '?' + query.join('&'));
      items.push.apply(items, answer.body.items || []);
      cont = answer.body.metadata && answer.body.metadata.continue;
    } while (cont);
    return items;
  }

  /** Whether the controller Deployment runs the expected image everywhere; else why not. */
  async controllerState() {
    const c = this.rules.controller;
    const base = '/apis/apps/v1/namespaces/' + enc(this.rules.namespace);
    const answer = await request(this.options, 'GET', base + '/deployments/' + enc(c.deployment));
    if (answer.status === 404) return 'the controller Deployment ' + c.deployment + ' does not exist yet';
    if (answer.status !== 200) throw new ApiError('reading the controller Deployment ' + c.deployment, answer);
    const d = answer.body;
    const images = ((d.spec.template.spec || {}).containers || []).map(container => container.image);
    if (!images.includes(c.image)) return 'the controller Deployment runs ' + images.join(', ') + ', not ' + c.image + ' yet';
    const spec = d.spec.replicas === undefined ? 1 : d.spec.replicas;
    const s = d.status || {};
    if ((s.observedGeneration || 0) < (d.metadata.generation || 0)) return 'the controller Deployment\'s change is not observed yet';
    if ((s.updatedReplicas || 0) < spec) return 'the controller Deployment rolls out: ' + (s.updatedReplicas || 0) + ' of ' + spec + ' Pods updated';
    if ((s.replicas || 0) > (s.updatedReplicas || 0)) return 'old controller Pods are still running: ' + (s.replicas - s.updatedReplicas);
    if ((s.availableReplicas || 0) < (s.updatedReplicas || 0)) return 'the new controller Pods are not available yet';
    // Pods of older ReplicaSets that are terminating are not counted in the status: wait until they are gone.
    const selector = Object.entries((d.spec.selector && d.spec.selector.matchLabels) || {}).map(([k, v]) => k + '=' + v).join(',');
    const pods = await this.list('/api/v1/namespaces/' + enc(this.rules.namespace) + '/pods', selector);
    const old = pods.filter(pod => !((pod.spec && pod.spec.containers) || []).some(container => container.image === c.image));
    if (old.length) return 'controller Pods of the old release are still there: ' + old.map(pod => pod.metadata.name).join(', ');
    return undefined;
  }

  async waitForController() {
    const deadline = Date.now() + this.rules.waitSeconds * 1000;
    let said;
    for (;;) {
      const why = await this.controllerState();
      if (why === undefined) {
        log('the controller runs ' + this.rules.controller.image + ' only: no 1.11.1 controller re-creates what is deleted now');
        return true;
      }
      if (why !== said) log('waiting: ' + why);
      said = why;
      if (Date.now() > deadline) {
        log('gave up waiting for the controller after ' + this.rules.waitSeconds + ' s: nothing deleted', { why });
        return false;
      }
      await sleep(Number(process.env.POLL_SECONDS || this.rules.pollSeconds) * 1000);
    }
  }

  /** The objects a rule names: listed by label across namespaces, or read by name in each namespace. */
  async candidates(rule) {
    if (rule.name === undefined) return this.list(collectionPath(rule), rule.labelSelector);
    const namespaces = rule.where === 'stack' ? [this.rules.namespace] : await this.namespaces();
    const found = [];
    for (const namespace of namespaces) {
      if (rule.where === 'copies' && namespace === this.rules.namespace) continue;
      const answer = await request(this.options, 'GET', collectionPath(rule, namespace) + '/' + enc(rule.name));
      if (answer.status === 404) continue;
      if (answer.status !== 200) throw new ApiError('reading ' + rule.kind + ' ' + namespace + '/' + rule.name, answer);
      found.push(answer.body);
    }
    return found;
  }

  async namespaces() {
    if (!this.namespaceNames) this.namespaceNames = (await this.list('/api/v1/namespaces')).map(ns => ns.metadata.name).sort();
    return this.namespaceNames;
  }

  selects(rule, object) {
    const m = object.metadata;
    if (rule.names && !rule.names.includes(m.name)) return false;
    if (rule.where === 'copies' && m.namespace === this.rules.namespace) return false;
    if (rule.where === 'stack' && m.namespace !== this.rules.namespace) return false;
    if (!matchesLabels(object, rule.labels)) return false;
    if (rule.ownedByFunction && !ownedByFunction(object, this.rules.functionGroup)) return false;
    return true;
  }

  async removeFinalizer(rule, object) {
    const finalizers = object.metadata.finalizers || [];
    if (!rule.finalizer || !finalizers.includes(rule.finalizer)) return false;
    const itemPath = collectionPath(rule, object.metadata.namespace) + '/' + enc(object.metadata.name);
    let current = object;
    for (let attempt = 0; ; attempt++) {
      const updated = JSON.parse(JSON.stringify(current));
      updated.metadata.finalizers = (current.metadata.finalizers || []).filter(f => f !== rule.finalizer);
      const answer = await request(this.options, 'PUT', itemPath, updated);
      if (answer.status === 200 || answer.status === 404) return true;
      if (answer.status !== 409 || attempt >= 4) throw new ApiError('removing the finalizer ' + rule.finalizer + ' of ' + rule.kind + ' ' + object.metadata.namespace + '/' + object.metadata.name, answer);
      const again = await request(this.options, 'GET', itemPath);
      if (again.status === 404) return true;
      if (again.status !== 200) throw new ApiError('reading ' + itemPath, again);
      current = again.body;
      if (!(current.metadata.finalizers || []).includes(rule.finalizer)) return true;
    }
  }

  async apply(rule, object) {
    const where = label(rule, object);
    if (matchesLabels(object, this.rules.userLabels)) {
      this.kept += 1;
      log('kept: labelled as the user\'s', Object.assign({ what: rule.what }, where, { labels: this.rules.userLabels }));
      return;
    }
    const unfinalized = await this.removeFinalizer(rule, object);
    if (unfinalized) log('removed the finalizer ' + rule.finalizer, Object.assign({ what: rule.what }, where));
    const ours = rule.oursIf === undefined || matchesLabels(object, rule.oursIf);
    if (rule.action !== 'delete' || !ours) {
      this.kept += 1;
      log('kept: ' + (rule.action === 'delete' ? rule.keptBecause : rule.keptBecause || 'the sync prunes it'), Object.assign({ what: rule.what }, where));
      return;
    }
    const itemPath = collectionPath(rule, object.metadata.namespace) + '/' + enc(object.metadata.name) + '?propagationPolicy=Background';
    const answer = await request(this.options, 'DELETE', itemPath, {
      apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid: object.metadata.uid },
    });
    if (answer.status === 404 || answer.status === 409) return;
    if (answer.status < 200 || answer.status >= 300) throw new ApiError('deleting ' + rule.kind + ' ' + where.namespace + '/' + where.name, answer);
    this.deleted += 1;
    log('deleted', Object.assign({ what: rule.what }, where));
  }

  async clean(rule) {
    let objects;
    try {
      objects = (await this.candidates(rule)).filter(object => this.selects(rule, object));
    } catch (error) {
      this.failures.push(error.message);
      log('cannot find the ' + rule.what + 's', { error: error.message });
      return;
    }
    for (const object of objects) {
      try {
        await this.apply(rule, object);
      } catch (error) {
        this.failures.push(error.message);
        log('failed', Object.assign({ what: rule.what }, label(rule, object), { error: error.message }));
      }
    }
  }

  /** Drops the BuildReady condition, which no 1.13.0 controller writes or removes, from every Function's status. */
  async dropCondition() {
    const condition = this.rules.staleCondition;
    const fnPath = '/apis/' + this.rules.functionGroup + '/' + this.rules.functionVersion;
    let functions;
    try {
      functions = await this.list(fnPath + '/functions');
    } catch (error) {
      this.failures.push(error.message);
      log('cannot list Functions', { error: error.message });
      return;
    }
    for (const fn of functions) {
      let current = fn;
      const where = { kind: 'Function', namespace: fn.metadata.namespace, name: fn.metadata.name };
      const itemPath = fnPath + '/namespaces/' + enc(fn.metadata.namespace) + '/functions/' + enc(fn.metadata.name);
      try {
        for (let attempt = 0; ; attempt++) {
          const conditions = (current.status && current.status.conditions) || [];
          if (!conditions.some(c => c.type === condition)) break;
          const updated = JSON.parse(JSON.stringify(current));
          updated.status.conditions = conditions.filter(c => c.type !== condition);
          const answer = await request(this.options, 'PUT', itemPath + '/status', updated);
          if (answer.status === 200) {
            log('removed the condition ' + condition + ' from the status', where);
            break;
          }
          if (answer.status === 404) break;
          if (answer.status !== 409 || attempt >= 4) throw new ApiError('writing the status of Function ' + where.namespace + '/' + where.name, answer);
          const again = await request(this.options, 'GET', itemPath);
          if (again.status === 404) break;
          if (again.status !== 200) throw new ApiError('reading Function ' + where.namespace + '/' + where.name, again);
          current = again.body;
        }
      } catch (error) {
        this.failures.push(error.message);
        log('failed', Object.assign(where, { error: error.message }));
      }
    }
  }
}

async function main() {
  const rulesFile = process.env.RULES_FILE || path.join(__dirname, 'rules.json');
  const options = inClusterOptions(30000);
  const rules = JSON.parse(fs.readFileSync(rulesFile, 'utf8'));
  const cleanup = new Cleanup(options, rules);
  if (!(await cleanup.waitForController())) return 1;
  for (const rule of rules.leftovers) await cleanup.clean(rule);
  await cleanup.dropCondition();
  log('done', { deleted: cleanup.deleted, kept: cleanup.kept, failed: cleanup.failures.length });
  return cleanup.failures.length ? 1 : 0;
}

main().then(code => { process.exitCode = code; }, error => {
  log('build-mode clean-up failed', { error: String(error && error.message || error) });
  process.exitCode = 1;
});
`;
