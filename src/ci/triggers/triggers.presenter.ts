import { TriggerResponse } from './triggers.responses';

const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** The v3 `Trigger` entity (the token is shown to masters, who alone reach these endpoints). */
export function presentTrigger(t: { token: string; createdAt: Date; updatedAt: Date; deletedAt: Date | null; lastUsed: Date | null }): TriggerResponse {
  return {
    token: t.token,
    created_at: new Date(t.createdAt).toISOString(),
    updated_at: new Date(t.updatedAt).toISOString(),
    deleted_at: iso(t.deletedAt),
    last_used: iso(t.lastUsed),
  };
}
