import { CreateHookDto } from './hook.dto';

/** `url` (required), the event switches, `enable_ssl_verification`, optional `token`. */
export class CreateSystemHookDto extends CreateHookDto {}
