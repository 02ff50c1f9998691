/**
 * An in-memory collection with an insertion sequence (for stable cursors), an optional unique key
 * and soft deletion. A soft-deleted record keeps its id (get answers 404) but frees its key, so a
 * later upsert of the same key creates a fresh record with a new id (docs/decisions.md, Emulator).
 */
export interface Entry<T> {
  readonly seq: number;
  readonly id: string;
  value: T;
  readonly key: string | undefined;
  deleted: boolean;
}

export class Collection<T> {
  #seq = 0;
  #byId = new Map<string, Entry<T>>();
  #byKey = new Map<string, Entry<T>>();
  #order: Entry<T>[] = [];

  insert(id: string, value: T, key?: string): Entry<T> {
    if (key !== undefined && this.#byKey.has(key)) throw new Error(`duplicate key ${key}`);
    this.#seq += 1;
    const entry: Entry<T> = { seq: this.#seq, id, value, key, deleted: false };
    this.#byId.set(id, entry);
    if (key !== undefined) this.#byKey.set(key, entry);
    this.#order.push(entry);
    return entry;
  }

  /** The live entry with this id. */
  get(id: string): Entry<T> | undefined {
    const entry = this.#byId.get(id);
    return entry === undefined || entry.deleted ? undefined : entry;
  }

  /** The entry with this id, deleted or not. */
  getAny(id: string): Entry<T> | undefined {
    return this.#byId.get(id);
  }

  getByKey(key: string): Entry<T> | undefined {
    return this.#byKey.get(key);
  }

  softDelete(id: string): boolean {
    const entry = this.get(id);
    if (entry === undefined) return false;
    entry.deleted = true;
    if (entry.key !== undefined) this.#byKey.delete(entry.key);
    return true;
  }

  /** Live entries in insertion order. */
  live(): Entry<T>[] {
    return this.#order.filter((e) => !e.deleted);
  }

  clear(): void {
    this.#seq = 0;
    this.#byId.clear();
    this.#byKey.clear();
    this.#order = [];
  }
}

/** `source:external_id` with the id percent-encoded, like the record keys of src/domain. */
export function sourceKey(source: string, externalId: string): string {
  return `${source}:${encodeURIComponent(externalId)}`;
}
