/**
 * A map keyed by a pair of strings (requester, tool) as two nested Maps: no key is built by
 * concatenation, so a lookup allocates nothing and no two pairs can collide.
 */
export class PairMap<V> {
  private readonly outer = new Map<string, Map<string, V>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(first: string, second: string): V | undefined {
    return this.outer.get(first)?.get(second);
  }

  set(first: string, second: string, value: V): void {
    let inner = this.outer.get(first);
    if (inner === undefined) {
      inner = new Map();
      this.outer.set(first, inner);
    }
    if (!inner.has(second)) this.count += 1;
    inner.set(second, value);
  }

  /** How many entries have `first` as their first key. */
  countOf(first: string): number {
    return this.outer.get(first)?.size ?? 0;
  }

  delete(first: string, second: string): boolean {
    const inner = this.outer.get(first);
    if (!inner?.delete(second)) return false;
    this.count -= 1;
    if (inner.size === 0) this.outer.delete(first);
    return true;
  }

  *entries(): IterableIterator<[string, string, V]> {
    for (const [first, inner] of this.outer) for (const [second, value] of inner) yield [first, second, value];
  }
}
