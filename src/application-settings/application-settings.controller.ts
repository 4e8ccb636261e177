import { Controller, Get, Put } from '@nestjs/common';
import { Admin } from '../common/auth/decorators';
import { Input, Params } from '../common/params/params';
import { API } from '../common/http/routes';
import { presentSettings } from './application-settings.presenter';
import { ApplicationSettingsService } from './application-settings.service';

@Admin()
@Controller(`${API}/application/settings`)
export class ApplicationSettingsController {
  constructor(private readonly settings: ApplicationSettingsService) {}

  @Get()
  async show() {
    return presentSettings(await this.settings.get());
  }

  @Put()
  async update(@Input() p: Params) {
    return presentSettings(await this.settings.update(p));
  }
}
