import { Controller, Get } from '@nestjs/common';
import { CurrentUser, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { Input } from '../common/params/params';
import { ListNamespacesDto } from './dto/namespace.dto';
import { presentNamespace } from './namespaces.presenter';
import { NamespacesService } from './namespaces.service';
import { ApiPageResponse } from '../openapi/response-types';
import { NamespaceResponse } from './namespaces.responses';

@Controller(`${API}/namespaces`)
export class NamespacesController {
  constructor(private readonly namespaces: NamespacesService) {}

  @ApiPageResponse(NamespaceResponse)
  @Get()
  async list(@CurrentUser() user: Caller, @Input() q: ListNamespacesDto) {
    return (await this.namespaces.list(user, q)).map(presentNamespace);
  }
}
