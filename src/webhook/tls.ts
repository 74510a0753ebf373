/**
 * Where the server's certificate comes from: files (given on the command line, or mounted from a
 * cert-manager Secret), or self-managed through the Kubernetes API.
 */
import * as fs from 'node:fs';
import {
  CertificatePair, certificateProblems, createCertificateAuthority, createServingCertificate, expiryOf, isUnexpired, splitPemBundle,
} from './certificates';
import { statusOf } from '../_api-errors';
import { SelfManagedTlsConfig, serviceDnsNames } from './config';
import { KubeClient, KubeResource, Secret, WebhookConfiguration } from './kube-client';
import { Logger } from './log';

/** A source of the serving certificate, which may change while the server runs. */
export interface CertificateSource {
  /**
   * Gets the first certificate and starts watching for new ones.
   *
   * @param onChange called with every later certificate
   * @returns the certificate to start with
   */
  start(onChange: (pair: CertificatePair) => void): Promise<CertificatePair>;
  /** Stops watching. */
  stop(): void;
}

/** The field manager of our writes, as the API server records it. */
export const FIELD_MANAGER = 'kyma-serverless-webhook';

/**
 * Reads the certificate and key from files, and reloads them when they change (as kubelet
 * updates a mounted Secret after cert-manager renews it).
 */
export class FileCertificates implements CertificateSource {
  private timer?: NodeJS.Timeout;
  private current?: CertificatePair;

  /**
   * @param certFile PEM certificate (chain) file
   * @param keyFile PEM private key file
   * @param logger where to report reloads
   * @param pollSeconds how often to look for changes
   */
  constructor(
    private readonly certFile: string,
    private readonly keyFile: string,
    private readonly logger: Logger,
    private readonly pollSeconds = 30,
  ) {}

  /** Reads both files and checks that the key belongs to the certificate. */
  public read(): CertificatePair {
    const read = (file: string, what: string) => {
      try {
        return fs.readFileSync(file, 'utf8');
      } catch (e) {
        throw new Error(`Cannot read the TLS ${what} ${file}: ${(e as Error).message}`);
      }
    };
    const pair = { cert: read(this.certFile, 'certificate'), key: read(this.keyFile, 'key') };
    const problems = certificateProblems(pair, { now: new Date(), validForDays: 0 });
    // An expired certificate still loads: the server must come up to say so in its logs.
    const fatal = problems.filter(p => !p.startsWith('it expires') && !p.startsWith('it is not valid before'));
    if (fatal.length) throw new Error(`The TLS certificate ${this.certFile} and key ${this.keyFile} cannot be used: ${fatal.join('; ')}`);
    if (problems.length) this.logger.warn({ certFile: this.certFile, problems }, 'the TLS certificate is not valid now');
    return pair;
  }

  public async start(onChange: (pair: CertificatePair) => void): Promise<CertificatePair> {
    this.current = this.read();
    this.timer = setInterval(() => {
      try {
        const next = this.read();
        if (next.cert !== this.current?.cert || next.key !== this.current?.key) {
          this.current = next;
          this.logger.info({ certFile: this.certFile, expires: expiryOf(next.cert).toISOString() }, 'reloaded the TLS certificate');
          onChange(next);
        }
      } catch (e) {
        // Mid-update (the certificate written, not yet the key): keep serving the old pair.
        this.logger.warn({ err: (e as Error).message }, 'could not reload the TLS certificate; keeping the current one');
      }
    }, this.pollSeconds * 1000);
    this.timer.unref();
    return this.current;
  }

  public stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** Keys of the self-managed Secret. */
export const SECRET_KEYS = {
  /** The CA bundle: the signing CA first, then a previous CA while it is still valid. */
  caBundle: 'ca.crt',
  /** The signing CA's key. */
  caKey: 'ca.key',
  /** The serving certificate. */
  cert: 'tls.crt',
  /** The serving certificate's key. */
  key: 'tls.key',
} as const;

interface SecretContents {
  readonly caBundle: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
}

function decode(data: { [key: string]: string } | undefined, key: string): string | undefined {
  const value = data?.[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

/** Rejects when `promise` takes longer than `ms`; the work itself goes on, its result is dropped. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000}s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Options of {@link SelfManagedCertificates}. */
export interface SelfManagedCertificatesOptions {
  /**
   * The current time (tests move it).
   *
   * @default - the system clock
   */
  readonly clock?: () => Date;
  /**
   * While a webhook configuration does not exist yet, how often to check again, in seconds,
   * instead of every `checkIntervalSeconds`.
   *
   * @default 10
   */
  readonly injectionRetrySeconds?: number;
}

/**
 * Self-managed TLS. At start-up, and then every `checkIntervalSeconds`:
 * 1. reads the Secret; creates it when missing, and renews the serving certificate (or the CA)
 *    when it is invalid or expires within `renewBeforeDays`. Another replica may win the race:
 *    a conflict means re-reading and using what it wrote;
 * 2. writes the CA bundle into the `caBundle` of every webhook of both configurations that
 *    calls our Service, where it differs (a GitOps re-sync may have blanked it);
 * 3. hands a new serving certificate to the server, which swaps it in without a restart.
 *
 * While a webhook configuration does not exist yet (a GitOps tool applies it in the same wave as
 * the Deployment, and the Pod may start first), it checks every `injectionRetrySeconds` instead,
 * until both configurations have the CA bundle: Functions cannot be admitted before.
 */
export class SelfManagedCertificates implements CertificateSource {
  private timer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private current?: CertificatePair;
  private onChange?: (pair: CertificatePair) => void;
  private checking = false;
  private stopped = false;
  /** The webhook configurations found missing at the last injection, by kind. */
  private readonly missing = new Set<string>();
  private readonly now: () => Date;
  private readonly injectionRetrySeconds: number;

  /**
   * @param client how to reach the API server (in the cluster: the Pod's ServiceAccount)
   * @param config names, namespace and timing
   * @param logger where to report what was done
   * @param options the clock, and the quicker retry while a webhook configuration is missing
   */
  constructor(
    private readonly client: KubeClient,
    private readonly config: SelfManagedTlsConfig,
    private readonly logger: Logger,
    options: SelfManagedCertificatesOptions = {},
  ) {
    this.now = options.clock ?? (() => new Date());
    this.injectionRetrySeconds = options.injectionRetrySeconds ?? 10;
  }

  public async start(onChange: (pair: CertificatePair) => void): Promise<CertificatePair> {
    this.stopped = false;
    this.onChange = onChange;
    this.current = await this.reconcile();
    this.timer = setInterval(() => this.check(), this.config.checkIntervalSeconds * 1000);
    this.timer.unref();
    this.scheduleRetry();
    return this.current;
  }

  public stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.retryTimer) clearInterval(this.retryTimer);
    this.timer = undefined;
    this.retryTimer = undefined;
  }

  /**
   * One pass of the loop above.
   *
   * @returns the serving certificate to use
   * @throws when the API server cannot be reached or refuses (RBAC), naming the object
   */
  public async reconcile(): Promise<CertificatePair> {
    const { namespace, secretName: name } = this.config;
    for (let attempt = 0; attempt < 3; attempt++) {
      let secret: Secret | undefined;
      try {
        secret = await this.client.read(KubeResource.SECRETS, name, namespace);
      } catch (e) {
        if (statusOf(e) !== 404) throw new Error(`Cannot read Secret ${namespace}/${name}: ${(e as Error).message}`);
      }
      const stored = secret && this.contentsOf(secret);
      const wanted = this.renew(stored);
      try {
        if (!secret) {
          await this.client.create(KubeResource.SECRETS, this.secretBody(wanted), { fieldManager: FIELD_MANAGER });
          this.logger.info({ secret: `${namespace}/${name}`, expires: expiryOf(wanted.cert).toISOString() }, 'created the serving certificate');
        } else if (wanted !== stored) {
          await this.client.replace(KubeResource.SECRETS, this.secretBody(wanted, secret), { fieldManager: FIELD_MANAGER });
          const what = wanted.cert !== stored?.cert ? 'renewed the serving certificate' : 'updated the CA bundle';
          this.logger.info({ secret: `${namespace}/${name}`, expires: expiryOf(wanted.cert).toISOString() }, what);
        }
      } catch (e) {
        // Another replica wrote first: use what it wrote.
        if (statusOf(e) === 409) continue;
        throw new Error(`Cannot write Secret ${namespace}/${name}: ${(e as Error).message}`);
      }
      await this.injectCaBundle(wanted.caBundle);
      return { cert: wanted.cert, key: wanted.key };
    }
    throw new Error(`Secret ${namespace}/${name} kept changing while the serving certificate was written; will retry`);
  }

  /** One check of the running loop, unless one is under way. */
  private check(): void {
    // One check at a time: a slow API server must not pile them up or reorder their results.
    if (this.checking) return;
    this.checking = true;
    withTimeout(this.reconcile(), this.config.checkIntervalSeconds * 1000, 'checking the serving certificate').then(pair => {
      if (this.stopped) return;
      if (pair.cert !== this.current?.cert) {
        this.current = pair;
        this.onChange?.(pair);
      }
    }, (e: unknown) => this.logger.error({ err: (e as Error).message }, 'could not check the serving certificate; will retry'))
      .finally(() => {
        this.checking = false;
        this.scheduleRetry();
      });
  }

  /** Checks every `injectionRetrySeconds` while a webhook configuration is missing, and stops once none is. */
  private scheduleRetry(): void {
    if (this.stopped) return;
    if (this.missing.size && !this.retryTimer) {
      this.logger.info({ missing: [...this.missing], retrySeconds: this.injectionRetrySeconds },
        'will check again soon, until both webhook configurations have the CA bundle');
      this.retryTimer = setInterval(() => this.check(), this.injectionRetrySeconds * 1000);
      this.retryTimer.unref();
    } else if (!this.missing.size && this.retryTimer) {
      clearInterval(this.retryTimer);
      this.retryTimer = undefined;
      this.logger.info({ checkIntervalSeconds: this.config.checkIntervalSeconds },
        'both webhook configurations have the CA bundle; back to the normal check interval');
    }
  }

  private contentsOf(secret: Secret): SecretContents | undefined {
    const data = secret.data;
    const contents = {
      caBundle: decode(data, SECRET_KEYS.caBundle),
      caKey: decode(data, SECRET_KEYS.caKey),
      cert: decode(data, SECRET_KEYS.cert),
      key: decode(data, SECRET_KEYS.key),
    };
    if (!contents.caBundle || !contents.caKey || !contents.cert || !contents.key) return undefined;
    return contents as SecretContents;
  }

  /** Returns `stored` itself when it is good; otherwise new contents, and logs why. */
  private renew(stored: SecretContents | undefined): SecretContents {
    const now = this.now();
    const { renewBeforeDays, serviceName, namespace } = this.config;
    const dnsNames = serviceDnsNames(serviceName, namespace);
    const storedCas = splitPemBundle(stored?.caBundle ?? '');
    // A CA that expired or does not parse is dropped from the bundle.
    const validCas = storedCas.filter(cert => isUnexpired(cert, now));
    const storedCa = stored && validCas.length && validCas[0] === storedCas[0] ? { cert: storedCas[0], key: stored.caKey } : undefined;
    const caProblems = storedCa ? certificateProblems(storedCa, { now, validForDays: renewBeforeDays }) : ['there is none'];

    let ca: CertificatePair;
    let bundle: string;
    if (storedCa && !caProblems.length) {
      ca = storedCa;
      bundle = validCas.join('');
    } else {
      if (stored) this.logger.info({ problems: caProblems }, 'renewing the CA');
      ca = createCertificateAuthority(`${serviceName}-ca`, now);
      // The old CA stays trusted until it expires: other replicas still serve certificates it signed.
      bundle = ca.cert + validCas.join('');
    }
    const servingProblems = stored && ca === storedCa
      ? certificateProblems(stored, { now, validForDays: renewBeforeDays, dnsNames, issuer: ca.cert })
      : ['there is none signed by the current CA'];
    if (stored && !servingProblems.length && bundle === stored.caBundle) return stored;
    if (stored && ca === storedCa && servingProblems.length) this.logger.info({ problems: servingProblems }, 'renewing the serving certificate');
    const serving = stored && !servingProblems.length ? { cert: stored.cert, key: stored.key } : createServingCertificate(ca, dnsNames, now);
    return { caBundle: bundle, caKey: ca.key, cert: serving.cert, key: serving.key };
  }

  private secretBody(contents: SecretContents, existing?: Secret): Secret {
    const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64');
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: this.config.secretName,
        namespace: this.config.namespace,
        resourceVersion: existing?.metadata?.resourceVersion,
        labels: { ...existing?.metadata?.labels, 'app.kubernetes.io/managed-by': FIELD_MANAGER },
      },
      // The type of an existing Secret cannot change; ours is kubernetes.io/tls, but Opaque works as well.
      type: existing?.type ?? 'kubernetes.io/tls',
      data: {
        [SECRET_KEYS.caBundle]: encode(contents.caBundle),
        [SECRET_KEYS.caKey]: encode(contents.caKey),
        [SECRET_KEYS.cert]: encode(contents.cert),
        [SECRET_KEYS.key]: encode(contents.key),
      },
    };
  }

  /** Writes the CA bundle into both webhook configurations, where it differs. */
  private async injectCaBundle(bundle: string): Promise<void> {
    const caBundle = Buffer.from(bundle, 'utf8').toString('base64');
    await this.inject(KubeResource.MUTATING_WEBHOOK_CONFIGURATIONS, this.config.mutatingWebhookConfiguration, caBundle);
    await this.inject(KubeResource.VALIDATING_WEBHOOK_CONFIGURATIONS, this.config.validatingWebhookConfiguration, caBundle);
  }

  private async inject(resource: KubeResource<WebhookConfiguration>, name: string, caBundle: string): Promise<void> {
    const kind = resource.kind;
    for (let attempt = 0; attempt < 3; attempt++) {
      let configuration: WebhookConfiguration;
      try {
        configuration = await this.client.read(resource, name);
      } catch (e) {
        if (statusOf(e) === 404) {
          // Not applied yet (the GitOps tool applies it with the Deployment): a check soon writes it.
          if (this.missing.has(kind)) {
            this.logger.debug({ kind, name }, 'the webhook configuration does not exist yet');
          } else {
            this.missing.add(kind);
            this.logger.warn({ kind, name }, 'the webhook configuration does not exist yet; will inject the CA bundle once it does');
          }
          return;
        }
        throw new Error(`Cannot read ${kind} ${name}: ${(e as Error).message}`);
      }
      const ours = (configuration.webhooks ?? []).filter(w =>
        w.clientConfig.service?.name === this.config.serviceName && w.clientConfig.service?.namespace === this.config.namespace);
      const stale = ours.filter(w => w.clientConfig.caBundle !== caBundle);
      if (stale.length === 0) {
        this.missing.delete(kind);
        return;
      }
      for (const webhook of stale) webhook.clientConfig.caBundle = caBundle;
      try {
        await this.client.replace(resource, configuration, { fieldManager: FIELD_MANAGER });
        this.missing.delete(kind);
        this.logger.info({ kind, name, webhooks: stale.length }, 'injected the CA bundle');
        return;
      } catch (e) {
        if (statusOf(e) === 409) continue;
        throw new Error(`Cannot update ${kind} ${name}: ${(e as Error).message}`);
      }
    }
    throw new Error(`${kind} ${name} kept changing while the CA bundle was written; will retry`);
  }
}
