import { Commit } from '../git/objects';
import { presentBranch, presentCommit, presentCommitDetail, presentDiff, presentTag, presentTreeEntry } from './repo-api.presenter';

/** RepoCommit, RepoCommitDetail and the raw branch/tag commit (../shared/docs/gitlab-compat.md §5.1, §5.2). */
const REPO_COMMIT = ['id', 'short_id', 'title', 'author_name', 'author_email', 'created_at', 'message', 'parent_ids'];
const GIT_COMMIT = ['id', 'message', 'parent_ids', 'authored_date', 'author_name', 'author_email', 'committed_date', 'committer_name', 'committer_email'];

const sha = '0123456789abcdef0123456789abcdef01234567';
const commit: Commit = {
  id: sha,
  parentIds: ['f'.repeat(40)],
  tree: 'e'.repeat(40),
  author: { name: 'A', email: 'a@example.com', date: '2014-02-27T10:14:56.000+02:00', epoch: 1393488896 },
  committer: { name: 'C', email: 'c@example.com', date: '2014-02-27T11:00:00.000+02:00', epoch: 1393491600 },
  message: 'Subject line\n\nBody',
} as Commit;

describe('repository presenter', () => {
  it('RepoCommit: 8-character short_id, first line as title, committed date as created_at', () => {
    const c = presentCommit(commit);
    expect(Object.keys(c)).toEqual(REPO_COMMIT);
    expect(c.short_id).toBe('01234567');
    expect(c.title).toBe('Subject line');
    expect(c.created_at).toBe(commit.committer.date);
  });

  it('RepoCommitDetail adds the dates and the CI status', () => {
    expect(Object.keys(presentCommitDetail(commit, null))).toEqual([...REPO_COMMIT, 'committed_date', 'authored_date', 'status']);
  });

  it('branches and tags embed the raw commit', () => {
    const b = presentBranch({ name: 'master', commit } as never, { protected: true, developersCanPush: false, developersCanMerge: true });
    expect(Object.keys(b)).toEqual(['name', 'commit', 'protected', 'developers_can_push', 'developers_can_merge']);
    expect(b.developers_can_merge).toBe(true);
    expect(Object.keys(b.commit)).toEqual(GIT_COMMIT);
    const t = presentTag({ name: 'v1', message: null, commit } as never, undefined);
    expect(Object.keys(t)).toEqual(['name', 'message', 'commit', 'release']);
    expect(t.release).toBeNull();
    expect(presentTag({ name: 'v1', message: 'm', commit } as never, { tag: 'v1', description: 'd' } as never).release).toEqual({
      tag_name: 'v1',
      description: 'd',
    });
  });

  it('tree entries and diffs', () => {
    expect(Object.keys(presentTreeEntry({ id: sha, name: 'a', type: 'blob', mode: '100644' } as never))).toEqual(['id', 'name', 'type', 'mode']);
    const d = presentDiff({
      oldPath: 'a',
      newPath: 'b',
      aMode: '100644',
      bMode: '100644',
      diff: '',
      newFile: false,
      renamedFile: true,
      deletedFile: false,
      tooLarge: false,
    });
    expect(Object.keys(d)).toEqual(['old_path', 'new_path', 'a_mode', 'b_mode', 'diff', 'new_file', 'renamed_file', 'deleted_file', 'too_large']);
  });
});
