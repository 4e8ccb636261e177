import { DomainError, ServiceUnavailable } from '../common/errors/domain-errors';

/** What a client is told when its credentials could not be checked. */
export const CREDENTIALS_UNCHECKED = 'the credentials could not be checked, try again';

/**
 * Runs a credential lookup (a private or OAuth token, a password, a build token): a failure that is
 * no answer about the credential — the database did not answer, its connection dropped — becomes
 * `ServiceUnavailable` (503, logged with the request id by the errors filter), never "no such
 * credential": a 401 would tell a client whose credentials are good that they are not, and a caller
 * that takes a missing user for an anonymous one would serve the request anonymously. Answers about
 * the credential (domain errors: a revoked token, a throttled login) pass as they are.
 */
export async function lookingUpCredentials<T>(lookup: () => Promise<T>): Promise<T> {
  try {
    return await lookup();
  } catch (e) {
    if (e instanceof DomainError) throw e;
    throw new ServiceUnavailable(CREDENTIALS_UNCHECKED, e);
  }
}
