import type { PlainVariable } from './variables.service';

/** The v3 `Variable` entity. */
export function presentVariable(v: PlainVariable) {
  return { key: v.key, value: v.value };
}
