import { Module } from '@nestjs/common';
import { HomeController } from './home.controller';

/** The page at `/` (the rest of the server is the API, git and the runner API). */
@Module({ controllers: [HomeController] })
export class HomeModule {}
