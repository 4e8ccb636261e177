import { transferConfigEnv } from './transfer-config';

const entries = (env: Record<string, string>) => {
  const out: Record<string, string> = {};
  for (let i = 0; i < Number(env.GIT_CONFIG_COUNT); i++) out[env[`GIT_CONFIG_KEY_${i}`]] = env[`GIT_CONFIG_VALUE_${i}`];
  return out;
};

describe('transferConfigEnv', () => {
  it("gives a push the connectivity check's settings, and a fetch git's defaults", () => {
    const push = entries(transferConfigEnv('/hooks', 'receive-pack'));
    expect(push['core.deltaBaseCacheLimit']).toBe('4m');
    expect(push['core.alternateRefsCommand']).toBe('true');
    expect(push['core.hooksPath']).toBe('/hooks');
    expect(push['receive.unpackLimit']).toBe('1');
    for (const service of ['upload-pack', 'upload-archive'] as const) {
      const fetch = entries(transferConfigEnv('/hooks', service));
      expect(fetch['core.deltaBaseCacheLimit']).toBeUndefined();
      expect(fetch['core.alternateRefsCommand']).toBeUndefined();
      expect(fetch['core.hooksPath']).toBe('/hooks');
    }
  });

  it('appends transport-specific entries after the common ones', () => {
    const env = transferConfigEnv('/hooks', 'upload-pack', [['http.receivepack', 'true']]);
    expect(entries(env)['http.receivepack']).toBe('true');
    expect(env[`GIT_CONFIG_KEY_${Number(env.GIT_CONFIG_COUNT) - 1}`]).toBe('http.receivepack');
  });
});
