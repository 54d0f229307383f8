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

export const offsetOf = (page: number, pageSize: number) => (page - 1) * pageSize;
