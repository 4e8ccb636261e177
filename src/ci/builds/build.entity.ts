import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JobOptions, When, YamlVariable } from '../pipelines/ci-config';

/** GitLab 8.17's build states, and `manual` for a manual action reached (decision 36). */
export type BuildStatus = 'created' | 'pending' | 'running' | 'success' | 'failed' | 'canceled' | 'skipped' | 'manual';
export const FINISHED: BuildStatus[] = ['success', 'failed', 'canceled'];

/**
 * What only builds have; the status, name, stage, ref, sha and times are the build's row in
 * `commit_statuses` (same id). Reads join the two (see builds.repository.ts, `BuildRow`).
 */
@Entity('ci_builds')
export class BuildDetails {
  @PrimaryColumn() id: number;
  @Column({ name: 'pipeline_id' }) pipelineId: number;
  @Column({ name: 'project_id' }) projectId: number;
  @Column({ name: 'stage_idx' }) stageIdx: number;
  @Column({ type: 'text' }) commands: string;
  @Column({ type: 'jsonb' }) options: JobOptions;
  @Column({ name: 'yaml_variables', type: 'jsonb' }) yamlVariables: YamlVariable[];
  @Column({ name: 'tag_list', type: 'text', array: true }) tagList: string[];
  @Column({ type: 'varchar' }) when: When;
  @Column() tag: boolean;
  @Column({ name: 'runner_id', type: 'integer', nullable: true }) runnerId: number | null;
  @Column({ name: 'token_digest', type: 'varchar', nullable: true }) tokenDigest: string | null;
  @Column({ name: 'token_encrypted', type: 'text', nullable: true }) tokenEncrypted: string | null;
  @Column({ name: 'trigger_request_id', type: 'integer', nullable: true }) triggerRequestId: number | null;
  @Column({ name: 'user_id', type: 'integer', nullable: true }) userId: number | null;
  @Column({ type: 'double precision', nullable: true }) coverage: number | null;
  @Column({ name: 'trace_size', type: 'bigint' }) traceSize: string;
  @Column({ name: 'artifacts_file', type: 'varchar', nullable: true }) artifactsFile: string | null;
  @Column({ name: 'artifacts_size', type: 'bigint', nullable: true }) artifactsSize: string | null;
  @Column({ name: 'artifacts_expire_at', type: 'timestamptz', nullable: true }) artifactsExpireAt: Date | null;
  @Column({ name: 'erased_at', type: 'timestamptz', nullable: true }) erasedAt: Date | null;
  @Column({ name: 'erased_by_id', type: 'integer', nullable: true }) erasedById: number | null;
}
