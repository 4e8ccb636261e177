import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApiOkResponse } from '@nestjs/swagger';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BuildReport, buildOpenApiDocument, canonicalJson, responseKey } from '../src/openapi/openapi.builder';
import { API } from '../src/common/http/routes';
import { VersionResponse } from '../src/health/version.responses';
import { EXPANSIONS } from '../src/openapi/paths';
import { expectSchema, validatorOf, validatorsFor } from './helpers/schema';
import { endpointShape, parseSpecEndpoints } from './helpers/spec-endpoints';
import { startTestApp, TestApp } from './helpers/test-app';

const ROOT = resolve(__dirname, '..');
const COMMITTED = join(ROOT, 'docs', 'openapi.json');
/** Every endpoint of the spec's tables (api-v3.md), as parseSpecEndpoints reads them. */
const SPEC_ENDPOINTS = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'spec-endpoints.json'), 'utf8')) as string[];
/** The spec itself, where this checkout can see it (the fixture must stay derived from it). */
const SPEC_FILE = [process.env.SPEC_FILE, resolve(ROOT, '..', 'shared', 'spec', 'api-v3.md'), '/work/shared/spec/api-v3.md'].find(
  (f): f is string => !!f && existsSync(f),
);

/**
 * Spec endpoints of the areas still being built. The lead removes lines as each area lands; the test
 * fails for a line whose endpoint is now in the document ("take it off PENDING"), so the list only
 * shrinks. Everything else of the spec must be in the document now.
 */
const PENDING: string[] = [];

/** Route keys (paths.ts expansions) of the areas in PENDING: none left. */
const PENDING_AREAS = /(?!)/;

type Json = Record<string, unknown>;

describe('OpenAPI document', () => {
  let t: TestApp;
  let served: Json;
  let operations: Set<string>;

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.http.get('/api/v3/openapi.json').expect(200);
    served = res.body;
    operations = new Set<string>();
    for (const [path, item] of Object.entries(served.paths as Record<string, Json>)) {
      for (const method of Object.keys(item)) operations.add(responseKey(method, path));
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  it('is served without authentication as JSON, and the committed docs/openapi.json is what the app generates', async () => {
    const res = await t.http.get('/api/v3/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.openapi).toMatch(/^3\./);
    const generated = canonicalJson(served);
    const committed = existsSync(COMMITTED) ? readFileSync(COMMITTED, 'utf8') : '';
    if (committed !== generated) {
      throw new Error('docs/openapi.json differs from the document the app generates: run npm run openapi (and commit it)');
    }
  });

  it('is deterministic: served twice alike, keys sorted, no timestamps', async () => {
    const again = await t.http.get('/api/v3/openapi.json').expect(200);
    expect(canonicalJson(again.body)).toBe(canonicalJson(served));
    expect(Object.keys(served.paths as Json)).toEqual(Object.keys(served.paths as Json).sort());
    expect(JSON.stringify(served)).not.toMatch(/20\d\d-\d\d-\d\dT\d\d:\d\d/);
  });

  it('lists every endpoint of the spec tables, apart from the PENDING areas', () => {
    const shapes = new Set([...operations].map(endpointShape));
    const missing = SPEC_ENDPOINTS.filter((e) => !PENDING.includes(e) && !shapes.has(endpointShape(e)));
    expect(missing).toEqual([]);
    const landed = PENDING.filter((e) => shapes.has(endpointShape(e)));
    if (landed.length) throw new Error(`now in the document, take off PENDING: ${landed.join(', ')}`);
    expect(PENDING.filter((e) => !SPEC_ENDPOINTS.includes(e))).toEqual([]);
  });

  (SPEC_FILE ? it : it.skip)('the endpoint fixture is derived from the spec tables', () => {
    expect(parseSpecEndpoints(readFileSync(SPEC_FILE as string, 'utf8'))).toEqual(SPEC_ENDPOINTS);
  });

  it('names path parameters as GitLab does', () => {
    const paths = Object.keys(served.paths as Json);
    for (const p of [
      '/api/v3/projects/{id}/issues/{issue_id}/notes/{note_id}',
      '/api/v3/projects/{id}/snippets/{snippet_id}/notes/{note_id}',
      '/api/v3/projects/{id}/milestones/{milestone_id}',
      '/api/v3/projects/{id}/labels/{label_id}/subscription',
      '/api/v3/projects/{id}/repository/branches/{branch}/protect',
      '/api/v3/projects/{id}/repository/tags/{tag_name}/release',
      '/api/v3/projects/{id}/repository/archive',
      '/api/v3/users/{uid}/keys/{id}',
      '/api/v3/projects/user/{user_id}',
    ]) {
      expect(paths).toContain(p);
    }
    for (const p of paths) expect(p).not.toMatch(/\{\w*[A-Z]\w*\}/); // no app names such as {noteableId}
    const op = (served.paths as Record<string, Record<string, Json>>)['/api/v3/projects/{id}/issues/{issue_id}'].get;
    expect((op.parameters as Json[]).filter((p) => p.in === 'path').map((p) => p.name)).toEqual(['id', 'issue_id']);
  });

  it('takes request schemas from the @Input() DTOs: a body for writes, query parameters for reads', () => {
    const paths = served.paths as Record<string, Record<string, Json>>;
    const create = paths['/api/v3/projects/{id}/milestones'].post;
    const ref = '#/components/schemas/CreateMilestoneDto';
    expect(create.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: ref } }, 'application/x-www-form-urlencoded': { schema: { $ref: ref } } },
    });
    const dto = (served.components as Json).schemas as Record<string, Json>;
    expect(dto.CreateMilestoneDto.required).toEqual(['title']);
    expect(Object.keys(dto.CreateMilestoneDto.properties as Json).sort()).toEqual(['description', 'due_date', 'title']);
    const list = paths['/api/v3/projects/{id}/milestones'].get;
    const query = (list.parameters as Json[]).filter((p) => p.in === 'query').map((p) => p.name);
    expect(query).toEqual(expect.arrayContaining(['page', 'per_page', 'iid', 'state']));
    expect(list.requestBody).toBeUndefined();
  });

  it("attaches the handlers' declared response classes, with pagination headers on paginated lists", () => {
    const paths = served.paths as Record<string, Record<string, Json>>;
    const resp = (path: string, method: string, status: string) => ((paths[path][method].responses as Json)[status] as Json) ?? {};
    const schemaOf = (r: Json) => ((r.content as Json)['application/json'] as Json).schema;
    expect(schemaOf(resp('/api/v3/projects/{id}/issues', 'get', '200'))).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Issue' },
    });
    expect(Object.keys(resp('/api/v3/projects/{id}/issues', 'get', '200').headers as Json)).toContain('Link');
    expect(schemaOf(resp('/api/v3/projects/{id}/issues', 'post', '201'))).toEqual({ $ref: '#/components/schemas/Issue' });
    expect(Object.keys(resp('/api/v3/projects/{id}/repository/branches', 'get', '200').headers as Json)).toContain('Link'); // every list is paginated
    expect(resp('/api/v3/projects/{id}/star', 'post', '304')).toHaveProperty('description');
    const schemas = (served.components as Json).schemas as Record<string, Json>;
    for (const name of [
      'User',
      'UserBasic',
      'UserFull',
      'Project',
      'Namespace',
      'Group',
      'Member',
      'Issue',
      'Milestone',
      'Label',
      'Note',
      'Snippet',
      'Commit',
      'Branch',
      'Tag',
      'Event',
      'MergeRequest',
      'Build',
      'Runner',
      'Trigger',
      'Variable',
    ]) {
      expect(schemas[name]).toHaveProperty('properties');
    }
  });

  it('every route declares its response type on its handler', () => {
    const report: BuildReport = {};
    buildOpenApiDocument(t.app.app, report);
    expect(report.untyped).toEqual([]);
  });

  it('a route without a declared response type is reported (the check above can fail)', async () => {
    @Controller(`${API}/probe`)
    class ProbeController {
      @Get()
      list() {
        return [];
      }

      @ApiOkResponse({ type: VersionResponse })
      @Get('typed')
      typed() {
        return { version: '8.8.0', revision: 'x' };
      }
    }
    @Module({ controllers: [ProbeController] })
    class ProbeModule {}
    const app = await NestFactory.create(ProbeModule, { preview: true, logger: false });
    try {
      const report: BuildReport = {};
      buildOpenApiDocument(app, report);
      expect(report.untyped).toEqual(['GET /probe']);
    } finally {
      await app.close();
    }
  });

  it("response classes are closed schemas, and a declared success status is the route's own", () => {
    const schemas = (served.components as Json).schemas as Record<string, Json>;
    for (const name of ['User', 'UserBasic', 'UserFull', 'UserLogin', 'Author', 'SSHKey', 'Email']) {
      expect(schemas[name].additionalProperties).toBe(false);
    }
    const paths = served.paths as Record<string, Record<string, Json>>;
    expect(Object.keys(paths['/api/v3/user/keys'].post.responses as Json)).toContain('201');
    expect(Object.keys(paths['/api/v3/user/keys'].get.responses as Json)).toContain('200');
  });

  it('expectSchema (test/helpers/schema.ts) passes a real answer and fails on drift: an extra field, a missing one, a wrong null', async () => {
    const validators = validatorsFor(served);
    const res = await t.http.get('/api/v3/user').set('PRIVATE-TOKEN', t.root.token).expect(200);
    await expectSchema(res, 'UserLogin');
    const check = (name: string, body: unknown) => validatorOf(validators, name)(body);
    expect(check('UserLogin', res.body)).toBe(true);
    expect(check('UserLogin', { ...res.body, extra: 1 })).toBe(false);
    const { email: _email, ...withoutEmail } = res.body;
    expect(check('UserLogin', withoutEmail)).toBe(false);
    expect(check('UserLogin', { ...res.body, email: null })).toBe(false);
    expect(check('UserLogin', { ...res.body, bio: null })).toBe(true); // nullable
    expect(check('UserLogin[]', [res.body])).toBe(true);
    expect(check('UserBasic', res.body)).toBe(false);
    await expect(expectSchema(res, 'UserBasic')).rejects.toThrow(/does not match UserBasic/);
  });

  it('uses every path expansion of paths.ts, except for areas still being built', () => {
    const report: BuildReport = {};
    const doc = buildOpenApiDocument(t.app.app, report);
    expect(canonicalJson(doc)).toBe(canonicalJson(served));
    const stale = (report.unusedExpansions ?? []).filter((k) => !EXPANSIONS[k].some((target) => PENDING_AREAS.test(target)));
    expect(stale).toEqual([]);
  });

  it('resolves every $ref', () => {
    const components = served.components as Record<string, Record<string, unknown>>;
    const refs = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref') refs.add(x as string);
          else walk(x);
        }
      }
    };
    walk(served);
    const broken = [...refs].filter((r) => {
      const [, , kind, name] = r.split('/');
      return !components[kind]?.[name];
    });
    expect(broken).toEqual([]);
  });

  it('marks authentication: public routes need none, the others take a token, admin routes say so', () => {
    const paths = served.paths as Record<string, Record<string, Json>>;
    expect(paths['/api/v3/session'].post.security).toEqual([]);
    expect(paths['/api/v3/licenses'].get.security).toEqual([]);
    expect(paths['/api/v3/openapi.json'].get.security).toEqual([]);
    expect(paths['/api/v3/projects'].get.security).toBeUndefined();
    expect((paths['/api/v3/projects'].get.responses as Json)['401']).toBeDefined();
    expect(paths['/api/v3/projects/all'].get.description).toMatch(/Administrators only/);
    expect((served.security as Json[]).length).toBeGreaterThan(0);
    const ids = Object.values(paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('leaves git smart HTTP and the health probes out', () => {
    const paths = Object.keys(served.paths as Json);
    expect(paths.filter((p) => !/^\/(api\/v3|ci\/api\/v1|oauth)\//.test(p))).toEqual([]);
  });
});
