const iso = (d: Date | string | null) => (d ? new Date(d).toISOString() : null);

/** The v3 `Trigger` entity (the token is shown to masters, who alone reach these endpoints). */
export function presentTrigger(t: { token: string; createdAt: Date; updatedAt: Date; deletedAt: Date | null; lastUsed: Date | null }) {
  return {
    token: t.token,
    created_at: iso(t.createdAt),
    updated_at: iso(t.updatedAt),
    deleted_at: iso(t.deletedAt),
    last_used: iso(t.lastUsed),
  };
}
