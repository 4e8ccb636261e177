import { Str } from '../../common/dto/fields';

/** `GET .../info/refs?service=git-upload-pack|git-receive-pack` (anything else: the dumb protocol, refused). */
export class InfoRefsDto {
  @Str() service?: string;
}
