import { Namespace } from '../namespaces/namespace.entity';
import { GroupResponse } from './groups.responses';

export function presentGroup(g: Namespace, externalUrl: string): GroupResponse {
  return {
    id: g.id,
    name: g.name,
    path: g.path,
    description: g.description,
    visibility_level: g.visibilityLevel,
    avatar_url: null,
    web_url: `${externalUrl}/groups/${g.path}`,
  };
}
