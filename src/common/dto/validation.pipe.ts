import { ArgumentMetadata, Injectable, PipeTransform, Type } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { InvalidAttribute, MissingAttribute, Rejected, ValidationFailed } from '../errors/domain-errors';
import { INPUT, Params } from '../params/params';
import { INVALID, markInvalid, REQUIRED, TOO_LONG, usesFieldMap } from './fields';

const PLAIN: ReadonlySet<unknown> = new Set([String, Boolean, Number, Array, Object, undefined]);

/**
 * The one global validation pipe. Handler inputs marked `@Input()` (query string and body merged,
 * see params.ts) become the handler's DTO class: unknown keys dropped
 * (python-gitlab adds `project_id`, `issue_id` …; never an error), values converted and checked by
 * the field decorators of fields.ts (null is "not given" unless a field is clearable). The first failing field, in declaration order, answers GitLab's
 * `400 (Bad request) "x" not given` or `"x" is invalid` — except on `@FieldMapErrors()` DTOs, whose badly typed
 * values the service reports in its field map (`invalidFields(dto)`).
 *
 * Class metadata is compiled once per DTO class by class-transformer/class-validator; nothing is
 * built per request beyond the instance itself.
 */
@Injectable()
export class GitlabValidationPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'custom' || metadata.data !== INPUT) return value;
    const metatype = metadata.metatype;
    if (metatype === Params) return value instanceof Params ? value : new Params(asRecord(value));
    if (PLAIN.has(metatype)) return value;
    return toDto(metatype as Type<object>, value);
  }
}

/** Builds and validates a DTO from raw inputs (also usable outside the HTTP pipe, e.g. in tests). */
export function toDto<T extends object>(cls: Type<T>, value: unknown): T {
  const raw = asRecord(value instanceof Params ? value.raw : value);
  const dto = plainToInstance(cls, raw, { excludeExtraneousValues: false, enableImplicitConversion: false });
  const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: false, stopAtFirstError: true });
  if (errors.length) {
    if (!usesFieldMap(cls)) throw toDomainError(errors[0]);
    // field-map DTOs: a missing required field still throws; badly typed fields are left for the service's map
    const missing = errors.find((e) => e.constraints && REQUIRED in e.constraints);
    if (missing) throw toDomainError(missing);
    const tooLong = errors.find((e) => e.constraints && TOO_LONG in e.constraints);
    if (tooLong) throw toDomainError(tooLong);
    for (const e of errors) delete (dto as Record<string, unknown>)[e.property];
    markInvalid(
      dto,
      errors.map((e) => e.property),
    );
  }
  return dto;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function toDomainError(error: ValidationError, prefix = ''): Error {
  const name = prefix ? `${prefix}[${error.property}]` : error.property;
  if (error.children?.length && !error.constraints) return toDomainError(error.children[0], name);
  if (error.constraints && REQUIRED in error.constraints) return new MissingAttribute(name);
  // a value longer than its column: GitLab's model message in a field map (never a 500 from the database)
  if (error.constraints && TOO_LONG in error.constraints) return new ValidationFailed({ [name]: [error.constraints[TOO_LONG]] });
  const message = error.constraints?.[INVALID];
  if (message) return new Rejected(message);
  return new InvalidAttribute(name);
}
