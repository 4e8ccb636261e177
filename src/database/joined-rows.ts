import { DataSource, EntityMetadata, EntityTarget, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

/**
 * Reading several entities out of one joined row: a list's page comes in one statement with the
 * rows it refers to (author, milestone, ...) joined in, each under its own column prefix. The
 * select list and the hydration come from the entity's own metadata, and values are prepared by
 * the driver exactly as TypeORM's own reads prepare them (dates, `date` columns as strings), so an
 * entity read this way is the same as one read by the ORM.
 */
export class JoinedEntity<T extends ObjectLiteral> {
  private list?: string;

  constructor(
    private readonly ds: DataSource,
    private readonly target: EntityTarget<T>,
    /** SQL alias of the table in the query. */
    readonly alias: string,
    /** Column prefix in the result (`prefix.column`). */
    readonly prefix: string,
  ) {}

  /** `alias."col" AS "prefix.col", …` for every column. */
  get columns(): string {
    if (this.list === undefined) {
      const esc = (n: string) => this.ds.driver.escape(n);
      this.list = this.ds
        .getMetadata(this.target)
        .columns.map((c) => `${this.alias}.${esc(c.databaseName)} AS ${esc(`${this.prefix}.${c.databaseName}`)}`)
        .join(', ');
    }
    return this.list;
  }

  /** The entity of `row`, or null when the join found none (its primary key is null). */
  from(row: Record<string, unknown>): T | null {
    // the metadata and the result keys once: looking them up and building the keys for every row cost more than the hydration
    const h = (this.hydration ??= this.prepareHydration());
    const id = row[h.primaryKey];
    if (id === null || id === undefined) return null;
    const entity = h.meta.create() as T;
    const driver = this.ds.driver;
    for (const [c, key] of h.columns) c.setEntityValue(entity, driver.prepareHydratedValue(row[key], c));
    return entity;
  }

  private hydration?: { meta: EntityMetadata; primaryKey: string; columns: [ColumnMetadata, string][] };

  private prepareHydration() {
    const meta = this.ds.getMetadata(this.target);
    return {
      meta,
      primaryKey: `${this.prefix}.${meta.primaryColumns[0].databaseName}`,
      columns: meta.columns.map((c): [ColumnMetadata, string] => [c, `${this.prefix}.${c.databaseName}`]),
    };
  }
}

/**
 * `getManyAndCount` in one statement: the page with the total as a window count (`count(*) OVER ()`,
 * one pass over the matching rows). The query's joins must be to-one (a row per entity), and its
 * page set with offset/limit. Only a page past the end costs a second (count) statement; the count
 * is never skipped for a short page, so the cost does not depend on the page size.
 */
export async function manyWithTotal<T extends ObjectLiteral>(qb: SelectQueryBuilder<T>): Promise<[T[], number]> {
  const { entities, raw } = await qb.clone().addSelect('count(*) OVER ()', 'window_total').getRawAndEntities();
  if (entities.length) return [entities, Number((raw[0] as { window_total: string }).window_total)];
  if (!qb.expressionMap.offset) return [[], 0];
  return [[], await qb.clone().offset(undefined).limit(undefined).orderBy().getCount()];
}
