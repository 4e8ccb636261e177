import { Str } from '../../../common/dto/fields';

/** `GET /projects/:id/builds/artifacts/:ref_name/download?job=NAME`: the job's name is required. */
export class ArtifactsByRefDto {
  @Str({ required: true, description: 'the name of the job' }) job!: string;
}
