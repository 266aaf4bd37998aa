/** In-process fan-out of "this account's feed moved" signals to long-polling readers. */
export class FeedNotifier {
  private readonly listeners = new Map<string, Set<() => void>>();

  subscribe(accountId: string, listener: () => void): () => void {
    let set = this.listeners.get(accountId);
    if (!set) {
      set = new Set();
      this.listeners.set(accountId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(accountId);
    };
  }

  emit(accountIds: Iterable<string>): void {
    for (const id of new Set(accountIds)) {
      for (const listener of [...(this.listeners.get(id) ?? [])]) listener();
    }
  }

  /** Wakes every listener (changes may have been missed: each re-reads its own feed). */
  emitAll(): void {
    this.emit([...this.listeners.keys()]);
  }
}
