import { Namespace } from './namespace.entity';

export function presentNamespace(n: Namespace) {
  return { id: n.id, path: n.path, kind: n.kind };
}
