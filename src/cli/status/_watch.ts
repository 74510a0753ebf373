/**
 * The watches that keep `status`'s {@link FunctionStore} up to date: one per kind, through the
 * watch API, started again when the API server ends one.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Kind } from './_kinds';
import { FunctionStore } from './_store';

/**
 * Keeps a {@link FunctionStore} up to date with one watch per kind, from the resourceVersion of
 * its list. A watch that ends (the API server closes watches after a while) or reports an
 * ERROR (410 Expired) is replaced after the kind is listed again.
 */
export class StoreWatch {
  private readonly aborts = new Map<Kind['key'], AbortController>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly store: FunctionStore,
    private readonly kinds: readonly Kind[],
    private readonly namespace: string | undefined,
    private readonly onChange: () => void,
    private readonly onError: (e: Error) => void,
  ) {}

  /** Watches every kind the store could list, from where its list left off. */
  public async start(): Promise<void> {
    await Promise.all(this.kinds.filter(k => this.store.listed.has(k.key)).map(kind => this.watch(kind, 0)));
  }

  /** Ends every watch, and every restart still waiting. */
  public stop(): void {
    this.stopped = true;
    this.store.stop();
    for (const timer of this.timers) clearTimeout(timer);
    for (const abort of this.aborts.values()) abort.abort();
    this.aborts.clear();
  }

  private async watch(kind: Kind, restarts: number): Promise<void> {
    if (this.stopped || !this.store.listed.has(kind.key)) return;
    const { Watch } = await import('@kubernetes/client-node');
    const query = { ...this.store.selectors(kind), resourceVersion: this.store.listed.get(kind.key)?.resourceVersion, allowWatchBookmarks: true };
    let own: AbortController | undefined;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      own?.abort();
      if (!this.stopped) this.restart(kind, restarts + 1);
    };
    own = await new Watch(this.kubeConfig).watch(kind.path(this.namespace), query, (type: string, object: any) => {
      if (ended || this.stopped) return;
      restarts = 0;
      // An ERROR event (410 Expired: the resourceVersion is too old) ends the watch; listing again recovers.
      if (type === 'ERROR') end();
      else if (this.store.apply(kind, type, object)) this.onChange();
    }, () => end());
    if (this.stopped || ended) own.abort();
    else this.aborts.set(kind.key, own);
  }

  /** Lists the kind again and watches from there, after a pause that grows while watches keep ending at once. */
  private restart(kind: Kind, restarts: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.stopped) return;
      // The store's list tries again while the API server is unreachable or busy (it restarts), and fails after its retry timeout.
      this.store.list(kind).then(() => {
        if (this.stopped) return;
        this.onChange();
        return this.watch(kind, restarts);
      }).catch(e => this.onError(e as Error));
    }, Math.min(5_000, 100 * 2 ** Math.min(restarts - 1, 6)));
    this.timers.add(timer);
  }
}
