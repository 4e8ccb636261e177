import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from './helpers/test-app';

/**
 * Recurring statements become named prepared statements (src/database/prepared-statements.ts):
 * on one connection, a parameterised statement is sent unnamed twice, then prepared on its third
 * use and reused from then on; with DB_PREPARED_STATEMENTS=false nothing is ever prepared. By
 * default it is on with PostgreSQL and off on the embedded database (whose plans would live in the
 * app's process). Runs on both (pg_prepared_statements exists in both).
 */
describe('prepared statements', () => {
  async function preparedOnOneConnection(t: TestApp, text: string, times: number): Promise<{ statement: string }[]> {
    const runner = t.app.app.get(DataSource).createQueryRunner();
    try {
      for (let i = 0; i < times; i++) {
        const rows: { n: number }[] = await runner.query(text, [i]);
        expect(rows).toEqual([{ n: i + 1 }]); // the right answer every time, prepared or not
      }
      return await runner.query(`SELECT statement FROM pg_prepared_statements WHERE statement = $1`, [text]);
    } finally {
      await runner.release();
    }
  }

  describe('on (DB_PREPARED_STATEMENTS=true)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ DB_PREPARED_STATEMENTS: 'true' });
    });
    afterAll(async () => {
      await t.close();
    });

    it('a statement is prepared on its third use on a connection, and answers correctly before and after', async () => {
      const text = `SELECT $1::int + 1 AS n /* prepared-statements spec ${Date.now()} */`;
      expect(await preparedOnOneConnection(t, text, 2)).toEqual([]);
      expect(await preparedOnOneConnection(t, text, 1)).toEqual([{ statement: text }]);
      expect(await preparedOnOneConnection(t, text, 5)).toEqual([{ statement: text }]);
    });

    it('statements without parameters and transaction control are never named', async () => {
      const text = `SELECT 1 AS n /* unnamed ${Date.now()} */`;
      const runner = t.app.app.get(DataSource).createQueryRunner();
      try {
        for (let i = 0; i < 4; i++) await runner.query(text);
        expect(await runner.query(`SELECT statement FROM pg_prepared_statements WHERE statement = $1`, [text])).toEqual([]);
      } finally {
        await runner.release();
      }
    });
  });

  describe('off (DB_PREPARED_STATEMENTS=false)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ DB_PREPARED_STATEMENTS: 'false' });
    });
    afterAll(async () => {
      await t.close();
    });

    it('nothing is prepared however often a statement recurs', async () => {
      const text = `SELECT $1::int + 1 AS n /* off ${Date.now()} */`;
      expect(await preparedOnOneConnection(t, text, 6)).toEqual([]);
    });
  });

  describe('the default', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(async () => {
      await t.close();
    });

    it(process.env.DATABASE_URL ? 'PostgreSQL: on' : 'embedded: off', async () => {
      const text = `SELECT $1::int + 1 AS n /* default ${Date.now()} */`;
      const prepared = await preparedOnOneConnection(t, text, 4);
      expect(prepared).toEqual(process.env.DATABASE_URL ? [{ statement: text }] : []);
    });
  });
});
