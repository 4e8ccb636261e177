import { Namespace } from './namespace.entity';
import { NamespaceResponse } from './namespaces.responses';

export function presentNamespace(n: Namespace): NamespaceResponse {
  return { id: n.id, path: n.path, kind: n.kind };
}
