import { toDto } from './validation.pipe';
import { Bool, DateOnly, DateTime, Int, IntList, List, Str } from './fields';

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
    for (const [raw, v] of [['1', true], ['0', false], ['yes', true], ['FALSE', false], [true, true]] as const) {
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

  it('an array in a scalar position takes its last item', () => {
    expect(toDto(Sample, { title: ['a', 'b'] }).title).toBe('b');
  });
});
