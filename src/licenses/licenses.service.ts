import { Injectable } from '@nestjs/common';
import choosealicense from '@rexxars/choosealicense-list';
import { NotFound } from '../common/errors/domain-errors';
import { Paginated, paginateAll } from '../common/pagination/pagination';
import { ListLicensesDto, ShowLicenseDto } from './dto/license.dto';
import type { Caller } from '../common/caller/caller';

/** One license template from the choosealicense.com data published on npm. */
export interface LicenseTemplate {
  key: string;
  name: string;
  nickname: string | null;
  featured: boolean;
  htmlUrl: string;
  sourceUrl: string | null;
  description: string;
  conditions: string[];
  permissions: string[];
  limitations: string[];
  content: string;
}

interface RawLicense {
  title: string;
  id: string;
  description: string;
  permissions: string[];
  conditions: string[];
  limitations: string[];
  featured: boolean;
  nickname: string | null;
  urls: { choosealicense?: string; opensource?: string; github?: string };
  body: string;
}

const LICENSES: LicenseTemplate[] = Object.values((choosealicense as { list: Record<string, RawLicense> }).list)
  .map((l) => ({
    key: l.id.toLowerCase(),
    name: l.title,
    nickname: l.nickname || null,
    featured: Boolean(l.featured),
    htmlUrl: `https://choosealicense.com/licenses/${l.id.toLowerCase()}/`,
    sourceUrl: l.urls?.opensource ?? null,
    description: l.description,
    conditions: l.conditions ?? [],
    permissions: l.permissions ?? [],
    limitations: l.limitations ?? [],
    content: l.body,
  }))
  .sort((a, b) => a.key.localeCompare(b.key));

const YEAR = /\[year\]|<year>|\{yyyy\}|\[yyyy\]/g;
// GitLab's placeholders: `[project]`, `<description>`, and the GPL family's
// `<one line to give the program's (or library's) name and a brief idea of what it does.>`
const PROJECT = /[<{[](?:project|description|one line [^<>{}[\]\n]+ what it does\.)[>}\]]/gi;
const HOLDER = /\[fullname\]|\[name of author\]|\[name of copyright owner\]|<name of author>|\[copyright holders\]/g;

@Injectable()
export class LicensesService {
  /** Whole on the first page unless `per_page` says otherwise (GitLab 8 answered it unpaginated). */
  list(q: ListLicensesDto): Paginated<LicenseTemplate> {
    return paginateAll(q.popular ? LICENSES.filter((l) => l.featured) : LICENSES, q, { whole: true });
  }

  /** The template with `[year]`, `[project]` and `[fullname]` (else the caller's name, if signed in) filled in. */
  show(key: string, q: ShowLicenseDto, caller?: Caller): LicenseTemplate {
    return this.get(key, { project: q.project, fullname: q.fullname ?? caller?.name });
  }

  private get(key: string, fill: { project?: string; fullname?: string }): LicenseTemplate {
    const l = LICENSES.find((x) => x.key === key.toLowerCase());
    if (!l) throw new NotFound('License');
    let content = l.content.replace(YEAR, String(new Date().getUTCFullYear()));
    if (fill.project !== undefined) content = content.replace(PROJECT, () => fill.project as string);
    if (fill.fullname !== undefined) content = content.replace(HOLDER, () => fill.fullname as string);
    return { ...l, content };
  }
}
