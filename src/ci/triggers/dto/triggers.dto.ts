import { Raw, Str } from '../../../common/dto/fields';

/** `POST /projects/:id/trigger/builds`: no login, the trigger token is the credential. */
export class TriggerBuildsDto {
  @Str({ required: true }) token!: string;
  @Str({ required: true }) ref!: string;
  @Raw() variables?: unknown;
}
