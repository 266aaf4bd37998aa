// A Store that reports what its units of work cost, for the service's metrics. It wraps any
// backend without knowing it; nothing here knows about Prometheus.
import type { Store, TransactionOptions, Tx } from "./store.ts";

export interface StoreObserver {
  /** A unit of work finished (`ok` false: it threw). */
  unit(kind: "transaction" | "read", seconds: number, ok: boolean): void;
  /** A change-feed subscription (a waiting long-poll) started (+1) or ended (-1). */
  subscribers(delta: 1 | -1): void;
}

export function observeStore(store: Store, observer: StoreObserver): Store {
  const timed = async <T>(kind: "transaction" | "read", run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    let ok = false;
    try {
      const result = await run();
      ok = true;
      return result;
    } finally {
      observer.unit(kind, (performance.now() - started) / 1000, ok);
    }
  };
  return {
    kind: store.kind,
    transaction: <T>(fn: (tx: Tx) => Promise<T>, opts?: TransactionOptions) =>
      timed("transaction", () => store.transaction(fn, opts)),
    read: <T>(fn: (tx: Tx) => Promise<T>) => timed("read", () => store.read(fn)),
    // The cached hot path: a hit costs microseconds, a miss is a read and is counted as one.
    memoized: <T>(key: string, load: (tx: Tx) => Promise<T>) => store.memoized(key, load),
    subscribe(accountId, listener) {
      observer.subscribers(1);
      const unsubscribe = store.subscribe(accountId, listener);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        observer.subscribers(-1);
        unsubscribe();
      };
    },
    schema: () => store.schema(),
    close: () => store.close(),
  };
}
