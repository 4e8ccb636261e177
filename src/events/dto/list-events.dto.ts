import { PaginationDto } from '../../common/pagination/pagination.dto';

/** `GET /projects/:id/events`: only `page` and `per_page`. */
export class ListEventsDto extends PaginationDto {}
