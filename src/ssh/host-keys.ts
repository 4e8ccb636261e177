import { chmodSync, existsSync, linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sshpk from 'sshpk';
import { utils } from 'ssh2';

export interface HostKey {
  /** The private key in OpenSSH format (what ssh2 serves). */
  privateKey: Buffer;
  /** `ssh-ed25519 AAAA…`: a `known_hosts` entry without the host. */
  publicKey: string;
  /** `SHA256:…`, as `ssh-keygen -lf` and the client's first-connection prompt show it. */
  fingerprint: string;
  type: string;
}

const GENERATED: { file: string; generate: () => { private: string } }[] = [
  { file: 'ssh_host_ed25519_key', generate: () => utils.generateKeyPairSync('ed25519') },
  { file: 'ssh_host_rsa_key', generate: () => utils.generateKeyPairSync('rsa', { bits: 3072 }) },
];

function describe(privateKey: Buffer): HostKey {
  const key = sshpk.parsePrivateKey(privateKey, 'auto');
  const pub = key.toPublic();
  return {
    privateKey,
    publicKey: pub.toString('ssh').split(' ').slice(0, 2).join(' '),
    fingerprint: pub.fingerprint('sha256').toString(),
    type: pub.type,
  };
}

/**
 * The server's host keys: the files SSH_HOST_KEY_FILES names, or an Ed25519 and an RSA 3072 key
 * generated on first start into DATA_DIR (0600). Several instances sharing DATA_DIR thus present one
 * host identity; two that start together both generate, and the first file linked into place wins
 * (a hard link never overwrites), so they still agree.
 */
export function loadHostKeys(dataDir: string, files: string[]): HostKey[] {
  if (files.length) return files.map((f) => describe(readFileSync(f)));
  return GENERATED.map(({ file, generate }) => {
    const path = join(dataDir, file);
    if (!existsSync(path)) {
      const pair = generate();
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, pair.private, { mode: 0o600 });
      chmodSync(tmp, 0o600);
      try {
        linkSync(tmp, path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      } finally {
        unlinkSync(tmp);
      }
    }
    return describe(readFileSync(path));
  });
}
