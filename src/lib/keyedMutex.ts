import { Mutex } from "./mutex.ts";

/** FIFO mutexes by key, created on demand and dropped when idle. */
export class KeyedMutex {
  private readonly entries = new Map<string, { mutex: Mutex; users: number }>();

  /** Runs `fn` holding every key (taken in sorted order, so two callers can never deadlock). */
  async run<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(keys)].sort();
    const step = (i: number): Promise<T> => {
      if (i === sorted.length) return fn();
      const key = sorted[i]!;
      let entry = this.entries.get(key);
      if (!entry) {
        entry = { mutex: new Mutex(), users: 0 };
        this.entries.set(key, entry);
      }
      entry.users++;
      const held = entry;
      return held.mutex
        .run(() => step(i + 1))
        .finally(() => {
          if (--held.users === 0) this.entries.delete(key);
        });
    };
    return step(0);
  }
}
