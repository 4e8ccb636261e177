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

/** ssh2's own reading of a key: what the server will do with it at start. */
const unreadable = (privateKey: Buffer | string): string | undefined => {
  const parsed = utils.parseKey(privateKey);
  return parsed instanceof Error ? parsed.message : undefined;
};

/**
 * A new key ssh2 can read back. ssh2's generator writes about one Ed25519 key in 250 that its own parser
 * refuses ("Malformed OpenSSH private key": measured, 619 of 157,220), which failed the server's first
 * start; such a key is never written, another one is made.
 */
export function generateReadable(generate: () => { private: string }): string {
  for (let i = 0; ; i++) {
    const pair = generate();
    const problem = unreadable(pair.private);
    if (!problem) return pair.private;
    if (i >= 20) throw new Error(`could not generate an SSH host key: ${problem}`);
  }
}

function describe(privateKey: Buffer, file: string): HostKey {
  const problem = unreadable(privateKey);
  if (problem) throw new Error(`SSH host key ${file} cannot be used (${problem}); remove it to have a new one generated, or give another`);
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
  if (files.length) return files.map((f) => describe(readFileSync(f), f));
  return GENERATED.map(({ file, generate }) => {
    const path = join(dataDir, file);
    if (!existsSync(path)) {
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, generateReadable(generate), { mode: 0o600 });
      chmodSync(tmp, 0o600);
      try {
        linkSync(tmp, path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      } finally {
        unlinkSync(tmp);
      }
    }
    return describe(readFileSync(path), path);
  });
}
