import { Raw, Str } from '../../../common/dto/fields';

/** `POST /projects/:id/trigger/builds`: no login, the trigger token is the credential. */
export class TriggerBuildsDto {
  @Str({ required: true }) token!: string;
  @Str({ required: true }) ref!: string;
  @Raw() variables?: unknown;
}

/**
 * `POST /projects/:id/ref/:ref/trigger/builds` (8.x's other path): the ref comes from the path, which
 * wins over a `ref` in the body (Grape's route parameters are merged last).
 */
export class TriggerRefBuildsDto {
  @Str({ required: true }) token!: string;
  @Raw() variables?: unknown;
}
