import { toDto } from './validation.pipe';
import { Bool, DateOnly, DateTime, FieldMapErrors, Int, IntList, invalidFields, List, lookupText, Str } from './fields';

class Sample {
  @Str({ required: true, trim: true }) title!: string;
  @Str() description?: string;
  @Bool() confidential?: boolean;
  @Int({ clearable: true, zeroIsNull: true }) assignee_id?: number | null;
  @List() labels?: string[];
  @IntList() iid?: number[];
  @DateOnly({ clearable: true }) due_date?: string | null;
  @DateTime() since?: Date;
  @Str({ enum: ['opened', 'closed', 'all'] }) state?: string;
  @Str({ allowNul: true }) search?: string;
}

/** A model-backed input whose fields carry GitLab's own messages (inherited fields included). */
class MappedBase {
  @Int({ invalid: 'is not a number', min: 0 }) limit?: number;
}

@FieldMapErrors()
class MappedWithMessages extends MappedBase {
  @Str({ required: true }) name!: string;
  @Bool() admin?: boolean;
  @IntList() levels?: number[];
  @Str() bio?: string;
}

const err = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { body(): unknown }).body();
  }
  throw new Error('no error');
};

describe('request DTO fields', () => {
  it('converts GitLab habits and drops unknown keys', () => {
    const dto = toDto(Sample, {
      title: '  Hello ',
      confidential: 'True',
      assignee_id: '7',
      labels: 'a, b,,c',
      iid: ['1', 2],
      project_id: 5,
      since: '2100-01-01T00:00:00Z',
    });
    expect(dto).toBeInstanceOf(Sample);
    expect(dto.title).toBe('Hello');
    expect(dto.confidential).toBe(true);
    expect(dto.assignee_id).toBe(7);
    expect(dto.labels).toEqual(['a', 'b', 'c']);
    expect(dto.iid).toEqual([1, 2]);
    expect(dto.since?.toISOString()).toBe('2100-01-01T00:00:00.000Z');
    expect('project_id' in dto).toBe(false);
  });

  it('booleans: 1/0/yes/no/true/false in any case', () => {
    for (const [raw, v] of [
      ['1', true],
      ['0', false],
      ['yes', true],
      ['FALSE', false],
      [true, true],
    ] as const) {
      expect(toDto(Sample, { title: 't', confidential: raw }).confidential).toBe(v);
    }
    expect(err(() => toDto(Sample, { title: 't', confidential: 'maybe' }))).toEqual({ message: '400 (Bad request) "confidential" is invalid' });
  });

  it('missing or blank required fields are "not given"; null is not given', () => {
    expect(err(() => toDto(Sample, {}))).toEqual({ message: '400 (Bad request) "title" not given' });
    expect(err(() => toDto(Sample, { title: '  ' }))).toEqual({ message: '400 (Bad request) "title" not given' });
    expect(err(() => toDto(Sample, { title: null }))).toEqual({ message: '400 (Bad request) "title" not given' });
    expect(toDto(Sample, { title: 't', description: null }).description).toBeUndefined();
  });

  it('clearable fields keep null for null, blank and (with zeroIsNull) 0', () => {
    expect(toDto(Sample, { title: 't', due_date: null }).due_date).toBeNull();
    expect(toDto(Sample, { title: 't', due_date: '' }).due_date).toBeNull();
    expect(toDto(Sample, { title: 't', assignee_id: 0 }).assignee_id).toBeNull();
    expect(toDto(Sample, { title: 't', due_date: '2016-02-29' }).due_date).toBe('2016-02-29');
    expect(err(() => toDto(Sample, { title: 't', due_date: '2015-02-29' }))).toEqual({ message: '400 (Bad request) "due_date" is invalid' });
  });

  it('wrong types and formats are "is invalid"', () => {
    expect(err(() => toDto(Sample, { title: 't', assignee_id: 'x' }))).toEqual({ message: '400 (Bad request) "assignee_id" is invalid' });
    expect(err(() => toDto(Sample, { title: 't', iid: '1,x' }))).toEqual({ message: '400 (Bad request) "iid" is invalid' });
    expect(err(() => toDto(Sample, { title: { a: 1 } }))).toEqual({ message: '400 (Bad request) "title" is invalid' });
    expect(err(() => toDto(Sample, { title: 'a\u0000b' }))).toEqual({ message: '400 (Bad request) "title" is invalid' });
    expect(err(() => toDto(Sample, { title: 't', state: 'nope' }))).toEqual({ message: '400 (Bad request) "state" is invalid' });
    expect(err(() => toDto(Sample, { title: 't', since: 'yesterday' }))).toEqual({ message: '400 (Bad request) "since" is invalid' });
  });

  it('allowNul leaves NUL bytes to the service', () => {
    expect(toDto(Sample, { title: 't', search: 'a\u0000b' }).search).toBe('a\u0000b');
    expect(err(() => toDto(Sample, { title: 't', search: { a: 1 } }))).toEqual({ message: '400 (Bad request) "search" is invalid' });
    expect(err(() => lookupText('a\u0000b'))).toEqual({ message: '400 Bad request - invalid characters in input' });
    expect(lookupText('ab')).toBe('ab');
  });

  it("blank: a required field may be an empty string; invalidMessage: GitLab's own message for a bad value", () => {
    class Own {
      @Str({ required: true, blank: true }) content!: string;
      @DateTime({ invalidMessage: '"since" must be a timestamp' }) since?: Date;
    }
    expect(toDto(Own, { content: '' }).content).toBe('');
    expect(err(() => toDto(Own, {}))).toEqual({ message: '400 (Bad request) "content" not given' });
    expect(err(() => toDto(Own, { content: null }))).toEqual({ message: '400 (Bad request) "content" not given' });
    expect(err(() => toDto(Own, { content: 'x', since: 'soon' }))).toEqual({ message: '400 "since" must be a timestamp' });
    expect(toDto(Own, { content: 'x', since: '9999-12-31T23:59:59Z' }).since?.toISOString()).toBe('9999-12-31T23:59:59.000Z');
  });

  it('an array in a scalar position takes its last item', () => {
    expect(toDto(Sample, { title: ['a', 'b'] }).title).toBe('b');
  });

  it('@FieldMapErrors DTOs leave badly typed fields to the service map; missing required fields still throw', () => {
    @FieldMapErrors()
    class Mapped {
      @Str({ required: true }) name!: string;
      @Bool() issues_enabled?: boolean;
      @Int() visibility_level?: number;
    }
    const dto = toDto(Mapped, { name: 'n', issues_enabled: 'maybe', visibility_level: 'x' });
    expect(dto.issues_enabled).toBeUndefined();
    expect(dto.visibility_level).toBeUndefined();
    expect(invalidFields(dto)).toEqual({ issues_enabled: ['is invalid'], visibility_level: ['is invalid'] });
    expect(Object.keys(dto)).not.toContain('issues_enabled');
    expect(invalidFields(toDto(Mapped, { name: 'n', issues_enabled: 'yes' }))).toEqual({});
    expect(err(() => toDto(Mapped, { issues_enabled: 'maybe' }))).toEqual({ message: '400 (Bad request) "name" not given' });
  });

  it('on @FieldMapErrors DTOs a field can carry its own message (`invalid`), bounds failures included', () => {
    const dto = toDto(MappedWithMessages, { name: 'n', admin: 'maybe', limit: 'lots', levels: '0,x', bio: { a: 1 } });
    expect(dto).toMatchObject({ name: 'n' });
    expect([dto.admin, dto.limit, dto.levels, dto.bio]).toEqual([undefined, undefined, undefined, undefined]);
    expect(invalidFields(dto)).toEqual({ admin: ['is invalid'], limit: ['is not a number'], levels: ['is invalid'], bio: ['is invalid'] });
    expect(invalidFields(toDto(MappedWithMessages, { name: 'n', limit: -1 }))).toEqual({ limit: ['is not a number'] });
    const good = toDto(MappedWithMessages, { name: 'n', admin: 'true', limit: '3', levels: [0, '10'] });
    expect(good).toMatchObject({ admin: true, limit: 3, levels: [0, 10] });
    expect(invalidFields(good)).toEqual({});
  });
});
