import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The boundary rule `boundaries/no-foreign-table-writes` (eslint.boundaries.mjs): a raw SQL write names
 * only its own area's tables. Run through ESLint's API in a child node (the config is an ES module),
 * on the writes that used to cross areas and on the files that now hold them.
 */
const ROOT = join(__dirname, '..');

interface Case {
  file: string;
  code: string;
}
interface Found {
  file: string;
  messages: string[];
}

/** The rule's messages for each case (the cases' text at their path under src/, and real files by path). */
function lint(cases: Case[], files: string[] = []): Found[] {
  const script = `
    import { ESLint } from 'eslint';
    import tseslint from 'typescript-eslint';
    import boundaries from './eslint.boundaries.mjs';
    const [cases, files] = JSON.parse(process.argv[1]);
    const eslint = new ESLint({
      cwd: process.cwd(),
      overrideConfigFile: true,
      overrideConfig: [{ files: ['src/**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...boundaries],
    });
    const results = [...(await Promise.all(cases.map((c) => eslint.lintText(c.code, { filePath: c.file })))).flat(), ...(await eslint.lintFiles(files))];
    const rel = (f) => f.slice(process.cwd().length + 1);
    process.stdout.write(JSON.stringify(results.map((r) => ({
      file: rel(r.filePath),
      messages: r.messages.filter((m) => m.ruleId === 'boundaries/no-foreign-table-writes').map((m) => m.message),
    }))));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify([cases, files])], { cwd: ROOT, encoding: 'utf8' });
  return JSON.parse(out) as Found[];
}

describe('eslint boundaries: no raw SQL write of another area’s table', () => {
  let found: Found[];

  beforeAll(() => {
    found = lint(
      [
        // the writes issue 23 moved to their owners, as they were
        {
          file: 'src/events/events.repository.ts',
          code: 'export const q = (ids: number[]) => [`UPDATE projects SET last_activity_at = now() WHERE id = ANY($1)`, ids];',
        },
        {
          file: 'src/namespaces/namespaces.repository.ts',
          code: "export const q = `DELETE FROM projects WHERE namespace_id IN (SELECT id FROM namespaces WHERE kind = 'user' AND owner_id = $1) RETURNING id`;",
        },
        {
          file: 'src/notes/notes.repository.ts',
          code: "export const TOUCH = { Issue: 'UPDATE issues SET updated_at = now() WHERE id = $1', MergeRequest: 'UPDATE merge_requests SET updated_at = now() WHERE id = $1' };",
        },
        // an area's own tables, row locks and upserts are fine
        {
          file: 'src/projects/x.repository.ts',
          code: 'export const q = [`UPDATE projects SET x = 1`, `INSERT INTO users_star_projects (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = 2`, `SELECT id FROM issues FOR UPDATE SKIP LOCKED`, `SELECT id FROM namespaces FOR NO KEY UPDATE`];',
        },
        { file: 'src/queue/x.repository.ts', code: "export const q = 'UPDATE pgboss.job SET state = $1';" },
        // a table nobody owns yet, and migrations (which write every table)
        { file: 'src/projects/y.repository.ts', code: "export const q = 'INSERT INTO widgets (a) VALUES (1)';" },
        { file: 'src/database/migrations/1-x.ts', code: "export const q = 'UPDATE projects SET x = 1; DELETE FROM notes';" },
      ],
      [
        'src/events/events.repository.ts',
        'src/namespaces/namespaces.repository.ts',
        'src/notes/notes.repository.ts',
        'src/projects/project-records.repository.ts',
      ],
    );
  }, 60_000);

  it('flags the writes that crossed areas', () => {
    const [events, namespaces, notes] = found;
    expect(events.messages).toEqual([expect.stringMatching(/^'UPDATE projects': the projects area owns 'projects'/)]);
    expect(namespaces.messages).toEqual([expect.stringMatching(/^'DELETE FROM projects': the projects area owns 'projects'/)]);
    expect(notes.messages).toEqual([
      expect.stringMatching(/^'UPDATE issues': the issues area owns 'issues'/),
      expect.stringMatching(/^'UPDATE merge_requests': the merge-requests area owns 'merge_requests'/),
    ]);
  });

  it("allows an area's own tables, FOR UPDATE and DO UPDATE; migrations are left out", () => {
    expect(found[3].messages).toEqual([]);
    expect(found[4].messages).toEqual([]);
    expect(found[6].messages).toEqual([]);
  });

  it('asks for an owner of a table the map does not know', () => {
    expect(found[5].messages).toEqual([expect.stringMatching(/^'INSERT INTO widgets': no area owns 'widgets'/)]);
  });

  it('passes the files that now leave those writes to their owners', () => {
    const files = found.slice(7);
    expect(files.map((f) => f.file)).toEqual([
      'src/events/events.repository.ts',
      'src/namespaces/namespaces.repository.ts',
      'src/notes/notes.repository.ts',
      'src/projects/project-records.repository.ts',
    ]);
    for (const f of files) expect(f.messages).toEqual([]);
  });
});
