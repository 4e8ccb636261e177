import { Str } from '../../../common/dto/fields';

/** `coverage.svg?job=NAME`: one job's coverage rather than the pipeline's. */
export class BadgeDto {
  @Str({ description: "the job whose coverage is shown (default: the pipeline's)" }) job?: string;
}
