// A Map that forgets its oldest entry past a size: for per-path and per-version memories that
// must not grow with the life of the mount.
export class BoundedMap<K, V> extends Map<K, V> {
  private readonly max: number;
  constructor(max: number) {
    super();
    this.max = max;
  }
  override set(key: K, value: V): this {
    super.set(key, value);
    if (this.size > this.max) this.delete(this.keys().next().value as K);
    return this;
  }
}
