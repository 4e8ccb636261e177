import { Bool, List, Raw, Str } from '../../../common/dto/fields';

/** `POST runners/register`: a registration token (shared) or a project's runners token (specific). */
export class RegisterRunnerDto {
  @Str({ required: true }) token!: string;
  @Str({ maxLength: 255 }) description?: string;
  @List() tag_list?: string[];
  @Bool() run_untagged?: boolean;
  @Raw() info?: unknown;
}

/** Calls authenticated by the runner token (`DELETE runners/delete`, `POST builds/register`). */
export class RunnerTokenDto {
  @Str() token?: string;
  @Raw() info?: unknown;
}

/** `PUT builds/:id`: the runner's state and, from older runners, the full trace. */
export class UpdateBuildDto {
  @Str() token?: string;
  @Str() state?: string;
  @Raw() trace?: unknown;
  @Raw() info?: unknown;
}

/** Build-token calls (trace, artifacts): the `token` parameter wins over the `BUILD-TOKEN` header. */
export class BuildTokenDto {
  @Str() token?: string;
  @Str() expire_in?: string;
}
