import { Controller, Get, Post, Put } from '@nestjs/common';
import { Admin } from '../common/caller/caller';
import { API } from '../common/http/routes';
import { Input } from '../common/params/params';
import { UpdateApplicationSettingsDto } from './dto/application-settings.dto';
import { presentSettings } from './application-settings.presenter';
import { ApplicationSettingsService } from './application-settings.service';
import { ApiOkResponse } from '@nestjs/swagger';
import { ApiCreated } from '../openapi/response-types';
import { ApplicationSettingsResponse } from './application-settings.responses';

@Admin()
@Controller(`${API}/application/settings`)
export class ApplicationSettingsController {
  constructor(private readonly settings: ApplicationSettingsService) {}

  @ApiOkResponse({ type: ApplicationSettingsResponse })
  @Get()
  async show() {
    return { ...presentSettings(await this.settings.get()), ...(await this.settings.adminFields()) };
  }

  @ApiOkResponse({ type: ApplicationSettingsResponse })
  @Put()
  async update(@Input() dto: UpdateApplicationSettingsDto) {
    return { ...presentSettings(await this.settings.update(dto)), ...(await this.settings.adminFields()) };
  }

  /** A new runners registration token (same as `PUT` with `reset_runners_registration_token=true`); 201 as action POSTs. */
  @ApiCreated(ApplicationSettingsResponse, 'the settings with a new runners_registration_token')
  @Post('reset_runners_registration_token')
  async resetRunnersRegistrationToken() {
    await this.settings.reset('runners_registration_token');
    return { ...presentSettings(await this.settings.get()), ...(await this.settings.adminFields()) };
  }
}
