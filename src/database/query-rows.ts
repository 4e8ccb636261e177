/**
 * TypeORM's `query()` answers UPDATE/DELETE with `[rows, rowCount]` and SELECT/INSERT with rows;
 * this returns the rows either way.
 */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}
