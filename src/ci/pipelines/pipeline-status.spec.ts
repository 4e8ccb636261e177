import { combinedStatus, latestByName, processPipeline, whenAllows } from './pipeline-status';

const s = (status: string, allowFailure = false) => ({ status, allowFailure });

describe('combinedStatus (GitLab 8.17 HasStatus.status_sql)', () => {
  it.each([
    ['no builds', [], null],
    ['all success', [s('success'), s('success')], 'success'],
    ['success + ignored failure', [s('success'), s('failed', true)], 'success'],
    ['success + ignored cancel', [s('success'), s('canceled', true)], 'success'],
    ['only ignored failures (kept from 8.8)', [s('failed', true)], 'success'],
    ['all pending', [s('pending'), s('pending')], 'pending'],
    ['canceled + success', [s('canceled'), s('success')], 'canceled'],
    ['all skipped', [s('skipped')], 'skipped'],
    ['pending + success', [s('pending'), s('success')], 'running'],
    ['running', [s('running'), s('failed')], 'running'],
    ['failed', [s('failed'), s('success')], 'failed'],
    ['failed + canceled', [s('failed'), s('canceled')], 'failed'],
    ['all created', [s('created'), s('created')], 'created'],
    ['pending + created (a later stage)', [s('pending'), s('created')], 'pending'],
    ['success + created', [s('success'), s('created')], 'running'],
    ['success + skipped', [s('success'), s('skipped')], 'success'],
    ['success + manual: actions do not hold the pipeline', [s('success'), s('manual')], 'success'],
    ['only manual actions', [s('manual')], 'skipped'],
    ['failed + manual', [s('failed'), s('manual')], 'failed'],
    ['success + skipped + canceled', [s('success'), s('skipped'), s('canceled')], 'canceled'],
  ] as [string, { status: string; allowFailure: boolean }[], string | null][])('%s', (_n, list, expected) => {
    expect(combinedStatus(list)).toBe(expected);
  });

  it('latestByName keeps the newest of each name', () => {
    const rows = [
      { id: 1, name: 'a', status: 'failed', allowFailure: false },
      { id: 3, name: 'a', status: 'success', allowFailure: false },
      { id: 2, name: 'b', status: 'success', allowFailure: false },
    ];
    expect(
      latestByName(rows)
        .map((r) => r.id)
        .sort(),
    ).toEqual([2, 3]);
    expect(combinedStatus(latestByName(rows))).toBe('success');
  });

  it.each([
    ['on_success', 'success', true],
    ['on_success', 'skipped', true],
    ['on_success', 'failed', false],
    ['on_failure', 'failed', true],
    ['on_failure', 'success', false],
    ['on_failure', 'skipped', false],
    ['always', 'success', true],
    ['always', 'failed', true],
    ['always', 'skipped', true],
    ['always', 'canceled', false],
    ['on_success', 'running', false],
    ['manual', 'success', false],
  ] as [string, string, boolean][])('when %s after %s → %s', (when, prior, ok) => expect(whenAllows(when, prior)).toBe(ok));
});

describe('processPipeline (GitLab 8.17 ProcessPipelineService)', () => {
  let nextId = 0;
  const b = (stageIdx: number, status: string, when = 'on_success', name = `j${nextId + 1}`, allowFailure = false) => ({
    id: ++nextId,
    name,
    stageIdx,
    status,
    when,
    allowFailure,
  });
  beforeEach(() => (nextId = 0));
  const decided = (m: Map<number, string>) => Object.fromEntries(m);

  it('a new pipeline: the first stage pending, later stages wait created', () => {
    expect(decided(processPipeline([b(0, 'created'), b(0, 'created'), b(1, 'created')]))).toEqual({ 1: 'pending', 2: 'pending' });
  });

  it('after a stage succeeded: on_success and always run, on_failure is skipped, a manual action waits as manual', () => {
    const builds = [b(0, 'success'), b(1, 'created'), b(1, 'created', 'always'), b(1, 'created', 'on_failure'), b(1, 'created', 'manual')];
    expect(decided(processPipeline(builds))).toEqual({ 2: 'pending', 3: 'pending', 4: 'skipped', 5: 'manual' });
  });

  it('after a failure: on_failure and always run; on_success and manual actions are skipped', () => {
    const builds = [b(0, 'failed'), b(1, 'created'), b(1, 'created', 'always'), b(1, 'created', 'on_failure'), b(1, 'created', 'manual')];
    expect(decided(processPipeline(builds))).toEqual({ 2: 'skipped', 3: 'pending', 4: 'pending', 5: 'skipped' });
  });

  it('stages wholly skipped or manual let the next one run in the same pass', () => {
    const builds = [b(0, 'created', 'on_failure'), b(1, 'created', 'manual'), b(2, 'created')];
    expect(decided(processPipeline(builds))).toEqual({ 1: 'skipped', 2: 'manual', 3: 'pending' });
  });

  it('a stage still running holds every later one; an allowed failure counts as passed', () => {
    expect(decided(processPipeline([b(0, 'running'), b(1, 'created')]))).toEqual({});
    nextId = 0;
    expect(decided(processPipeline([b(0, 'failed', 'on_success', 'x', true), b(1, 'created')]))).toEqual({ 2: 'pending' });
  });

  it('a retried build replaces the failed one of its name', () => {
    const builds = [b(0, 'failed', 'on_success', 'x'), b(1, 'created'), b(0, 'success', 'on_success', 'x')];
    expect(decided(processPipeline(builds))).toEqual({ 2: 'pending' });
  });
});
