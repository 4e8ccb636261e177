import { Controller, Get } from '@nestjs/common';
import { CurrentUser } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { User } from '../users/user.entity';
import { presentNamespace } from './namespaces.presenter';
import { NamespacesService } from './namespaces.service';

@Controller(`${API}/namespaces`)
export class NamespacesController {
  constructor(private readonly namespaces: NamespacesService) {}

  @Get()
  async list(@CurrentUser() user: User, @Input() p: Params) {
    return (await this.namespaces.list(user, p)).map(presentNamespace);
  }
}
