import { combinedStatus, latestByName, whenAllows } from './pipeline-status';

const s = (status: string, allowFailure = false) => ({ status, allowFailure });

describe('combinedStatus (GitLab 8.8 table)', () => {
  it.each([
    ['no builds', [], null],
    ['all success', [s('success'), s('success')], 'success'],
    ['success + ignored failure', [s('success'), s('failed', true)], 'success'],
    ['success + ignored cancel', [s('success'), s('canceled', true)], 'success'],
    ['all pending', [s('pending'), s('pending')], 'pending'],
    ['canceled + success', [s('canceled'), s('success')], 'canceled'],
    ['all skipped', [s('skipped')], 'skipped'],
    ['pending + success', [s('pending'), s('success')], 'running'],
    ['running', [s('running'), s('failed')], 'running'],
    ['failed', [s('failed'), s('success')], 'failed'],
    ['failed + canceled', [s('failed'), s('canceled')], 'failed'],
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
    ['on_success', 'failed', false],
    ['on_failure', 'failed', true],
    ['on_failure', 'success', false],
    ['always', 'success', true],
    ['always', 'failed', true],
    ['always', 'canceled', false],
    ['on_success', 'running', false],
  ] as [string, 'success', boolean][])('when %s after %s → %s', (when, prior, ok) => expect(whenAllows(when, prior)).toBe(ok));
});
