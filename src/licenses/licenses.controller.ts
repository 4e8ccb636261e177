import { Controller, Get, Param } from '@nestjs/common';
import { CurrentUser, Public, Caller } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { Input } from '../common/params/params';
import { ListLicensesDto, ShowLicenseDto } from './dto/license.dto';
import { presentLicense } from './licenses.presenter';
import { LicensesService } from './licenses.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiPageResponse } from '../openapi/response-types';
import { LicenseResponse } from './licenses.responses';

/** License templates answer without authentication; a signed-in caller's name fills the holder. */
@Public()
@Controller(`${API}/licenses`)
export class LicensesController {
  constructor(private readonly licenses: LicensesService) {}

  @ApiPageResponse(LicenseResponse)
  @Get()
  list(@Input() q: ListLicensesDto) {
    return this.licenses.list(q).map(presentLicense);
  }

  @ApiOkResponse({ type: LicenseResponse })
  @Get(':key')
  show(@Param('key') key: string, @Input() q: ShowLicenseDto, @CurrentUser() user?: Caller) {
    return presentLicense(this.licenses.show(key, q, user));
  }
}
