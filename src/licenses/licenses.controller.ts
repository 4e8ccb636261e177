import { Controller, Get, Param } from '@nestjs/common';
import { CurrentUser, Public } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Input, Params } from '../common/params/params';
import { User } from '../users/user.entity';
import { presentLicense } from './licenses.presenter';
import { LicensesService } from './licenses.service';

/** License templates answer without authentication; a signed-in caller's name fills the holder. */
@Public()
@Controller(`${API}/licenses`)
export class LicensesController {
  constructor(private readonly licenses: LicensesService) {}

  @Get()
  list(@Input() p: Params) {
    return this.licenses.list(p.bool('popular') ?? false).map(presentLicense);
  }

  @Get(':key')
  show(@Param('key') key: string, @Input() p: Params, @CurrentUser() user?: User) {
    return presentLicense(
      this.licenses.get(key, { project: p.string('project'), fullname: p.string('fullname') ?? user?.name }),
    );
  }
}
