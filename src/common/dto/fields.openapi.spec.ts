import { Bool, DateOnly, DateTime, Id, Int, IntList, List, Str } from './fields';

/** The OpenAPI side of the field decorators: what the document (src/openapi) shows for each field. */
class Sample {
  @Str({ required: true, description: 'the title' }) title!: string;
  @Str({ enum: ['close', 'reopen'] }) state_event?: string;
  @Bool() confidential?: boolean;
  @Int() weight?: number;
  @Id({ clearable: true, zeroIsNull: true }) assignee_id?: number | null;
  @List() labels?: string[];
  @IntList() iids?: number[];
  @DateTime() created_at?: Date;
  @DateOnly({ clearable: true }) due_date?: string | null;
}

/** @nestjs/swagger's DECORATORS.API_MODEL_PROPERTIES (its package exports do not reach dist/constants). */
const API_MODEL_PROPERTIES = 'swagger/apiModelProperties';
const meta = (key: keyof Sample) => Reflect.getMetadata(API_MODEL_PROPERTIES, Sample.prototype, key) as Record<string, unknown>;

describe('field decorators: OpenAPI properties', () => {
  it('declare type, format and requiredness', () => {
    expect(meta('title')).toMatchObject({ type: String, required: true, description: 'the title' });
    expect(meta('state_event')).toMatchObject({ type: String, required: false, enum: ['close', 'reopen'] });
    expect(meta('confidential')).toMatchObject({ type: Boolean, required: false });
    expect(meta('weight')).toMatchObject({ type: 'integer' });
    expect(meta('labels')).toMatchObject({ type: String, isArray: true });
    expect(meta('iids')).toMatchObject({ type: 'integer', isArray: true });
    expect(meta('created_at')).toMatchObject({ type: String, format: 'date-time' });
    expect(meta('due_date')).toMatchObject({ type: String, format: 'date' });
  });

  it('mark clearable fields nullable (null clears them), and only those', () => {
    expect(meta('due_date').nullable).toBe(true);
    expect(meta('assignee_id').nullable).toBe(true);
    expect(meta('title').nullable).toBeUndefined();
    expect(meta('weight').nullable).toBeUndefined();
  });
});
