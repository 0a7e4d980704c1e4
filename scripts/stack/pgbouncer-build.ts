// A PgBouncer that keeps prepared statements in transaction pooling (1.21+, `max_prepared_statements`), for the hosted
// topology (`./scripts/dev.sh --scaled`, the scaled suite, `npm run bench:scale`): the setting managed poolers run in
// production. Debian 12 ships 1.18, which has none, and a newer Debian's binary package needs a newer C library; so,
// when no PgBouncer 1.21+ is on the PATH, Debian's own newer source package (`apt-get source`, from the next release's
// `deb-src`: Debian's apt repositories are what these machines reach) is built once against this system's libraries
// (gcc, make, pkg-config, libevent-dev, libssl-dev from apt) into a cache outside the clone
// (`$BMAPI_TOOLS_DIR`, default `~/.cache/bmapi`), shared by every clone. ~1 minute on 2 cores, the first time only.
// Anything that fails (not root, no network, a build error) is said in one line and the caller falls back to Debian's
// 1.18 with unnamed statements, as before; BMAPI_PGBOUNCER_PREPARED=0 asks for that fallback (to compare).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findExecutable } from './redis.js';

type Log = (msg: string) => void;

/** The Debian release whose source package is built (its pgbouncer: 1.24). */
const SOURCE_SUITE = process.env.BMAPI_PGBOUNCER_SOURCE_SUITE ?? 'trixie';
const BUILD_DEPS = ['gcc', 'make', 'pkg-config', 'libevent-dev', 'libssl-dev'];
const LOCK_WAIT_MS = 10 * 60_000;

/** "1.24.1" → true when at least 1.21 (the first PgBouncer with max_prepared_statements). */
export function keepsPreparedStatements(version: string): boolean {
  const [major, minor] = version.split('.').map(Number);
  return major! > 1 || (major === 1 && minor! >= 21);
}

export function pgBouncerVersion(bin: string): string {
  return /PgBouncer (\S+)/.exec(spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[1] ?? '?';
}

function toolsDir(): string {
  return process.env.BMAPI_TOOLS_DIR?.trim() || path.join(os.homedir(), '.cache', 'bmapi');
}

/** A cached build, newest first. */
function cached(dir: string): string | undefined {
  if (!fs.existsSync(dir)) return undefined;
  const builds = fs
    .readdirSync(dir)
    .filter((d) => /^pgbouncer-\d/.test(d))
    .map((d) => path.join(dir, d, 'bin', 'pgbouncer'))
    .filter((bin) => fs.existsSync(bin) && keepsPreparedStatements(pgBouncerVersion(bin)));
  return builds.sort().reverse()[0];
}

/**
 * The path of a PgBouncer 1.21+: the PATH's, a cached build, or one built now; undefined (with the reason logged)
 * when none can be had.
 */
export async function pgBouncerWithPreparedStatements(log: Log): Promise<string | undefined> {
  // For comparisons (bench:scale): the system's PgBouncer whatever its version.
  if (process.env.BMAPI_PGBOUNCER_PREPARED === '0') return undefined;
  const onPath = findExecutable('pgbouncer');
  if (onPath && keepsPreparedStatements(pgBouncerVersion(onPath))) return onPath;
  const dir = toolsDir();
  const found = cached(dir);
  if (found) return found;
  if (process.getuid?.() !== 0) {
    log(
      'no PgBouncer 1.21+ (prepared statements in transaction pooling): building one needs root for apt-get; using the ' +
        "system's with unnamed statements",
    );
    return undefined;
  }
  fs.mkdirSync(dir, { recursive: true });
  const lock = path.join(dir, 'pgbouncer-build.lock');
  const release = await acquire(lock, log);
  try {
    return cached(dir) ?? build(dir, log);
  } finally {
    release();
  }
}

/** mkdir is atomic: one build at a time across clones; a lock older than the wait is taken over. */
async function acquire(lock: string, log: Log): Promise<() => void> {
  const until = Date.now() + LOCK_WAIT_MS;
  let said = false;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      return () => fs.rmSync(lock, { recursive: true, force: true });
    } catch {
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > LOCK_WAIT_MS || Date.now() > until) fs.rmSync(lock, { recursive: true, force: true });
      else {
        if (!said) log(`waiting for another PgBouncer build (${lock})`);
        said = true;
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }
}

function build(dir: string, log: Log): string | undefined {
  const logFile = path.join(dir, 'pgbouncer-build.log');
  fs.writeFileSync(logFile, '');
  const run = (cmd: string, args: string[], cwd = dir, env: NodeJS.ProcessEnv = process.env): boolean => {
    fs.appendFileSync(logFile, `$ ${cmd} ${args.join(' ')}\n`);
    const fd = fs.openSync(logFile, 'a');
    try {
      return spawnSync(cmd, args, { cwd, env, stdio: ['ignore', fd, fd] }).status === 0;
    } finally {
      fs.closeSync(fd);
    }
  };
  const fail = (what: string) => {
    log(`could not build PgBouncer 1.21+ (${what}; see ${logFile}): using the system's with unnamed statements`);
    return undefined;
  };
  const t = Date.now();
  log(
    `building PgBouncer from Debian ${SOURCE_SUITE}'s source for prepared statements in transaction pooling (one-time, ~1 min; ${logFile})`,
  );
  const apt = path.join(dir, 'apt');
  fs.rmSync(apt, { recursive: true, force: true });
  fs.mkdirSync(path.join(apt, 'lists', 'partial'), { recursive: true });
  fs.writeFileSync(path.join(apt, 'sources.list'), `deb-src http://deb.debian.org/debian ${SOURCE_SUITE} main\n`);
  const aptOpts = [
    '-o',
    `Dir::Etc::sourcelist=${path.join(apt, 'sources.list')}`,
    '-o',
    'Dir::Etc::sourceparts=-',
    '-o',
    `Dir::State::Lists=${path.join(apt, 'lists')}`,
    '-o',
    'DPkg::Lock::Timeout=120',
  ];
  const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const missing = BUILD_DEPS.filter((p) => spawnSync('dpkg', ['-s', p], { stdio: 'ignore' }).status !== 0);
  if (
    missing.length > 0 &&
    !run('apt-get', ['install', '-y', '-qq', '-o', 'DPkg::Lock::Timeout=120', ...missing], dir, aptEnv)
  ) {
    run('apt-get', ['update', '-qq', '-o', 'DPkg::Lock::Timeout=120'], dir, aptEnv);
    if (!run('apt-get', ['install', '-y', '-qq', '-o', 'DPkg::Lock::Timeout=120', ...missing], dir, aptEnv))
      return fail(`apt-get install ${missing.join(' ')}`);
  }
  if (!run('apt-get', ['update', '-qq', ...aptOpts], dir, aptEnv))
    return fail(`apt-get update of ${SOURCE_SUITE}'s deb-src`);
  const src = path.join(dir, 'pgbouncer-src');
  fs.rmSync(src, { recursive: true, force: true });
  fs.mkdirSync(src);
  if (!run('apt-get', ['source', '--download-only', '-qq', ...aptOpts, 'pgbouncer'], src, aptEnv))
    return fail('apt-get source pgbouncer');
  const tarball = fs.readdirSync(src).find((f) => /^pgbouncer_[\d.]+\.orig\.tar\.gz$/.test(f));
  const version = tarball && /^pgbouncer_([\d.]+)\.orig/.exec(tarball)?.[1];
  if (!tarball || !version) return fail('no upstream tarball in the source package');
  if (!run('tar', ['xzf', tarball], src)) return fail(`tar xzf ${tarball}`);
  const tree = path.join(src, `pgbouncer-${version}`);
  const prefix = path.join(dir, `pgbouncer-${version}`);
  const configure = ['--prefix', prefix, '--without-cares', '--without-systemd', '--without-pam', '--without-ldap'];
  if (!run('./configure', configure, tree)) return fail('configure');
  if (!run('make', ['-j', String(Math.max(1, os.cpus().length))], tree)) return fail('make');
  // The binary is all it takes (the docs' install step wants pandoc).
  fs.mkdirSync(path.join(prefix, 'bin'), { recursive: true });
  fs.copyFileSync(path.join(tree, 'pgbouncer'), path.join(prefix, 'bin', 'pgbouncer'));
  fs.chmodSync(path.join(prefix, 'bin', 'pgbouncer'), 0o755);
  fs.rmSync(src, { recursive: true, force: true });
  const bin = path.join(prefix, 'bin', 'pgbouncer');
  const got = pgBouncerVersion(bin);
  if (!keepsPreparedStatements(got)) return fail(`the build says version ${got}`);
  log(`PgBouncer ${got} built in ${((Date.now() - t) / 1000).toFixed(0)} s: ${bin}`);
  return bin;
}
