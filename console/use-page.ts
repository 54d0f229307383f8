// A paged list's page kept within the list: when the list's answer says it no longer reaches the page
// shown (rows deleted or decided since the pager offered it), the page moves to the last one.
import { useEffect } from 'preact/hooks';

export function useWithinList(page: number, setPage: (page: number) => void, data: { total: number; pageSize: number } | undefined): void {
  const last = data ? Math.max(1, Math.ceil(data.total / data.pageSize)) : page;
  useEffect(() => {
    if (page > last) setPage(last);
  }, [page, last]);
}
