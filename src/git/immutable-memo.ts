/**
 * Answers about immutable history — keyed by repository and full SHAs, so they can never go stale —
 * remembered in a bounded map, most recently used last, the oldest dropped beyond `max`. A key must
 * name the repository (its git dir) and full SHAs only: a branch or tag name moves, a SHA does not.
 * Callers check access before asking; the memo only spares git the walk.
 */
export class ImmutableMemo<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly max: number) {}

  get(key: string): V | undefined {
    if (!this.entries.has(key)) return undefined;
    const value = this.entries.get(key) as V;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** The remembered answer, or `compute()`'s, remembered. */
  async through(key: string, compute: () => Promise<V>): Promise<V> {
    if (this.entries.has(key)) return this.get(key) as V;
    const value = await compute();
    this.set(key, value);
    return value;
  }
}
