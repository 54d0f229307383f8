// The spec's page object, and the one place offset arithmetic lives.
export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
  hasMore: boolean;
}

export function pageOf<T>(items: T[], total: number, page: number, pageSize: number): Page<T> {
  return { items, total, page, pageSize, hasMore: page * pageSize < total };
}

/** pageOf's JSON from items already serialized (the same fields in the same order). */
export function pageJsonOf(itemsJson: string[], total: number, page: number, pageSize: number): string {
  return `{"items":[${itemsJson.join(',')}],"total":${total},"page":${page},"pageSize":${pageSize},"hasMore":${page * pageSize < total}}`;
}

export const offsetOf = (page: number, pageSize: number) => (page - 1) * pageSize;

/**
 * The largest page a list query accepts. Without it `page=1e308` passed the schema (it is an integer)
 * and the offset it makes reached the database, which refused it: 500 (found by bench/fuzz.ts).
 * (PAGE_MAX - 1) × the largest page size stays a small safe integer.
 */
export const PAGE_MAX = 1_000_000;
