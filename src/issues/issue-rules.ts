import { InvalidAttribute } from '../common/errors/domain-errors';
import { ListIssuesDto } from './dto/issue.dto';

export type IssueOrderColumn = 'created_at' | 'updated_at';

export interface IssueOrder {
  column: IssueOrderColumn;
  direction: 'ASC' | 'DESC';
}

/** `order_by` (created_at by default) and `sort` (`asc`/`desc` in any case, desc by default); else `"sort" is invalid`. */
export function issueOrder(q: Pick<ListIssuesDto, 'order_by' | 'sort'>): IssueOrder {
  const sort = (q.sort ?? 'desc').toLowerCase();
  if (sort !== 'asc' && sort !== 'desc') throw new InvalidAttribute('sort');
  return { column: (q.order_by as IssueOrderColumn | undefined) ?? 'created_at', direction: sort === 'asc' ? 'ASC' : 'DESC' };
}

/** `state`: opened (opened and reopened) or closed; anything else lists all. */
export function issueStates(state: string | undefined): ('opened' | 'reopened' | 'closed')[] | undefined {
  if (state === 'opened') return ['opened', 'reopened'];
  if (state === 'closed') return ['closed'];
  return undefined;
}
