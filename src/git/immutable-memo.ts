/**
 * Answers about immutable history — keyed by repository and full SHAs, so they can never go stale —
 * remembered in a bounded map, most recently used last, the oldest dropped beyond `max` entries or,
 * when `weigh` is given, beyond `maxWeight` (e.g. bytes of diff text). A key must name the repository
 * (its git dir) and full SHAs only: a branch or tag name moves, a SHA does not. Callers check access
 * before asking; the memo only spares git the walk. Remembered values are shared between callers:
 * hand out copies of anything a caller may change.
 */
export class ImmutableMemo<V> {
  private readonly entries = new Map<string, { value: V; weight: number }>();
  private weight = 0;

  constructor(
    private readonly max: number,
    private readonly weigh?: (value: V) => number,
    private readonly maxWeight = Infinity,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  set(key: string, value: V): void {
    const weight = this.weigh ? this.weigh(value) : 0;
    this.forget(key);
    if (weight > this.maxWeight) return; // larger than the whole memo: not remembered
    this.entries.set(key, { value, weight });
    this.weight += weight;
    while (this.entries.size > this.max || this.weight > this.maxWeight) this.forget(this.entries.keys().next().value as string);
  }

  /** The remembered answer, or `compute()`'s, remembered. */
  async through(key: string, compute: () => Promise<V>): Promise<V> {
    if (this.entries.has(key)) return this.get(key) as V;
    const value = await compute();
    this.set(key, value);
    return value;
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
  }
}
