import type { PlainVariable } from './variables.service';
import { VariableResponse } from './variables.responses';

/** The v3 `Variable` entity. */
export function presentVariable(v: PlainVariable): VariableResponse {
  return { key: v.key, value: v.value };
}
