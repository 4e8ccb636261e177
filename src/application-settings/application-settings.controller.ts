import { Controller, Get, Post, Put } from '@nestjs/common';
import { Admin } from '../common/auth/decorators';
import { API } from '../common/http/routes';
import { Input } from '../common/params/params';
import { UpdateApplicationSettingsDto } from './dto/application-settings.dto';
import { presentSettings } from './application-settings.presenter';
import { ApplicationSettingsService } from './application-settings.service';

@Admin()
@Controller(`${API}/application/settings`)
export class ApplicationSettingsController {
  constructor(private readonly settings: ApplicationSettingsService) {}

  @Get()
  async show() {
    return { ...presentSettings(await this.settings.get()), ...(await this.settings.adminFields()) };
  }

  @Put()
  async update(@Input() dto: UpdateApplicationSettingsDto) {
    return { ...presentSettings(await this.settings.update(dto)), ...(await this.settings.adminFields()) };
  }

  /** A new runners registration token (same as `PUT` with `reset_runners_registration_token=true`); 201 as action POSTs. */
  @Post('reset_runners_registration_token')
  async resetRunnersRegistrationToken() {
    await this.settings.reset('runners_registration_token');
    return { ...presentSettings(await this.settings.get()), ...(await this.settings.adminFields()) };
  }
}
