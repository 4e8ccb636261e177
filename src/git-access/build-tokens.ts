import { declareMethod } from '../common/discovery/declared-methods';
import type { BuildTokenGrant } from './git-access.service';

export const BUILD_TOKEN_RESOLVER = Symbol('build-token-resolver');

/**
 * Declares the method that resolves a `gitlab-ci-token` password (a build token) to the project it
 * may read — the CI area's — found by GitHttpService at bootstrap (common/discovery/declared-methods.ts).
 */
export function ResolvesBuildToken() {
  const declare = declareMethod<true>(BUILD_TOKEN_RESOLVER, true);
  return <T extends (token: string) => Promise<BuildTokenGrant | undefined>>(target: object, key: string | symbol, desc: TypedPropertyDescriptor<T>): void =>
    void declare(target, key, desc);
}
