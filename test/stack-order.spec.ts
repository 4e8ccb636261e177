import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The stack rule `boundaries/stack-order` (eslint.boundaries.mjs, LAYERS): an import points down the
 * list of layers or stays in its folder; the documented pairs (MUTUAL) may import each other. Run
 * through ESLint's API in a child node (the config is an ES module), on code placed at paths under
 * src/ and on the real tree.
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

function lint(cases: Case[], patterns: string[] = []): Found[] {
  const script = `
    import { ESLint } from 'eslint';
    import tseslint from 'typescript-eslint';
    import boundaries from './eslint.boundaries.mjs';
    const [cases, patterns] = JSON.parse(process.argv[1]);
    const eslint = new ESLint({
      cwd: process.cwd(),
      overrideConfigFile: true,
      overrideConfig: [{ files: ['src/**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...boundaries],
    });
    const results = [...(await Promise.all(cases.map((c) => eslint.lintText(c.code, { filePath: c.file })))).flat(), ...(patterns.length ? await eslint.lintFiles(patterns) : [])];
    const rel = (f) => f.slice(process.cwd().length + 1);
    process.stdout.write(JSON.stringify(results.map((r) => ({
      file: rel(r.filePath),
      messages: r.messages.filter((m) => m.ruleId === 'boundaries/stack-order').map((m) => m.message),
    }))));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify([cases, patterns])], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out) as Found[];
}

describe('eslint boundaries: imports point down the stack', () => {
  let found: Found[];
  let tree: Found[];

  beforeAll(() => {
    found = lint([
      // up: common below everything, an area calling the feed, shared services calling an area, the composition root from an area
      { file: 'src/common/errors/x.ts', code: "import { UsersService } from '../../users/users.service';\nexport const x = UsersService;" },
      { file: 'src/issues/x.ts', code: "import type { EventsService } from '../events/events.service';\nexport type X = EventsService;" },
      { file: 'src/queue/x.ts', code: "export { ProjectsService } from '../projects/projects.service';" },
      { file: 'src/users/x.ts', code: "export const m = () => import('../app.module');" },
      // down and sideways within a folder
      {
        file: 'src/events/x.ts',
        code: "import { NoteRecords } from '../notes/note-records.service';\nimport { y } from './y';\nexport const x = [NoteRecords, y];",
      },
      // the documented pairs, both ways
      { file: 'src/users/x.ts', code: "import { ProjectRecordsService } from '../projects/project-records.service';\nexport const x = ProjectRecordsService;" },
      { file: 'src/ci/builds/x.ts', code: "import { PipelinesService } from '../pipelines/pipelines.service';\nexport const x = PipelinesService;" },
      // a folder with no place, and a unit spec (not part of the program)
      { file: 'src/widgets/x.ts', code: "import { Logger } from '../common/logging/logger';\nexport const x = Logger;" },
      { file: 'src/common/errors/x.spec.ts', code: "import { RunnerApiError } from '../../ci/builds/builds.service';\nexport const x = RunnerApiError;" },
    ]);
    tree = lint([], ['src/**/*.ts']);
  }, 180_000);

  it('flags an import that points up, with both layers named', () => {
    expect(found[0].messages).toEqual([
      expect.stringMatching(/^'..\/..\/users\/users.service' points up the stack: common\/errors \(common\) may not import users \(areas\)/),
    ]);
    expect(found[1].messages).toEqual([expect.stringMatching(/issues \(areas\) may not import events \(areas\)/)]);
    expect(found[2].messages).toEqual([expect.stringMatching(/queue \(shared services\) may not import projects \(areas\)/)]);
    expect(found[3].messages).toEqual([expect.stringMatching(/users \(areas\) may not import app.module.ts \(composition\)/)]);
  });

  it('allows imports down the stack, within a folder, and between the documented pairs', () => {
    expect(found[4].messages).toEqual([]);
    expect(found[5].messages).toEqual([]);
    expect(found[6].messages).toEqual([]);
  });

  it('asks for a place for a folder the stack does not list; leaves unit specs out', () => {
    expect(found[7].messages).toEqual([expect.stringMatching(/^'widgets' has no place in the stack/)]);
    expect(found[8].messages).toEqual([]);
  });

  it('passes every file of src/ today', () => {
    expect(tree.length).toBeGreaterThan(400);
    expect(tree.filter((f) => f.messages.length > 0)).toEqual([]);
  });
});
