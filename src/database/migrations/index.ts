import { UsersAndSettings1732233600000 } from './1732233600000-users-and-settings';

/** Every migration, in order. A migration is frozen SQL and never imports entities. */
export const MIGRATIONS = [UsersAndSettings1732233600000];
