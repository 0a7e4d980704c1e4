// A private Redis Cluster for local runs and tests: 3 masters and a replica each (by default) from Debian's
// redis-server, built with `redis-cli --cluster create`, with a short cluster-node-timeout so that a killed master's
// replica is promoted within seconds. No persistence (a replica holds the data); everything under <dir>/redis-cluster.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  Child,
  StackError,
  allPids,
  freePort,
  isAlive,
  killAndWait,
  procReadlink,
  realpathOr,
  secs,
  waitFor,
  type StopStep,
} from './process.js';
import { findExecutable, findRedisServer } from './redis.js';
import { removePidFile, writePidFile } from './state.js';

const run = promisify(execFile);
const READY_TIMEOUT_MS = 30_000;
const STOP_STEPS: StopStep[] = [
  ['SIGTERM', 3_000],
  ['SIGKILL', 3_000],
];
type Log = (msg: string) => void;

export interface RedisClusterOptions {
  /** State directory: redis-cluster/<port>/ per node (its nodes.conf and log), pids/. */
  dir: string;
  /** Masters (default 3, the least `redis-cli --cluster create` accepts). */
  masters?: number;
  /** Replicas per master (default 1). */
  replicas?: number;
  /** cluster-node-timeout in ms (default 1000): a master unreachable this long is failed over by its replica. */
  nodeTimeoutMs?: number;
  /** The redis-server binary (default: found on PATH; installed with apt-get when missing and we are root). */
  bin?: string;
  log?: Log;
}

/** One redis-server of the cluster. */
export interface ClusterNode {
  port: number;
  /** The cluster bus port (set explicitly: port + 10000 may be out of range or taken). */
  busPort: number;
  dir: string;
  proc?: Child;
}

/** What CLUSTER NODES says about one node. */
export interface NodeView {
  id: string;
  port: number;
  role: 'master' | 'replica';
  failed: boolean;
  /** The master's id, for a replica. */
  masterId?: string;
  /** Slot ranges served (a master). */
  slots: [number, number][];
}

export class RedisCluster {
  readonly nodes: ClusterNode[] = [];
  private bin = '';
  private cli = '';
  private readonly log: Log;
  private readonly root: string;

  constructor(private readonly o: RedisClusterOptions) {
    this.log = o.log ?? (() => undefined);
    this.root = path.resolve(o.dir, 'redis-cluster');
  }

  /** REDIS_CLUSTER_NODES for the service: every node, `127.0.0.1:<port>` comma-separated. */
  get seeds(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  /** Starts every node, creates the cluster and waits until it is ok with every replica in sync. */
  async start(): Promise<void> {
    const t = Date.now();
    const masters = this.o.masters ?? 3;
    const total = masters * (1 + (this.o.replicas ?? 1));
    this.bin = this.o.bin ?? (await findRedisServer(this.log));
    this.cli = findExecutable('redis-cli') ?? path.join(path.dirname(this.bin), 'redis-cli');
    await stopStaleRedisCluster(this.o.dir);
    fs.rmSync(this.root, { recursive: true, force: true });
    try {
      for (let i = 0; i < total; i++) this.nodes.push(await this.startNode());
      await this.cliRun(
        [
          '--cluster',
          'create',
          ...this.nodes.map((n) => `127.0.0.1:${n.port}`),
          '--cluster-replicas',
          String(this.o.replicas ?? 1),
          '--cluster-yes',
        ],
        60_000,
      );
      await this.waitHealthy(masters, total - masters, READY_TIMEOUT_MS);
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.log(
      `redis cluster ready: ${masters} masters + ${total - masters} replicas on ${this.seeds} (${secs(Date.now() - t)})`,
    );
  }

  /** Stops every node. */
  async stop(): Promise<void> {
    await Promise.all(
      this.nodes.map(async (n) => {
        await n.proc?.stop();
        removePidFile(this.o.dir, pidName(n.port));
      }),
    );
  }

  /** The slot of a key (or of a hash tag: `{bmapi}`), as Redis computes it. */
  async slotOf(key: string): Promise<number> {
    return Number(await this.command(this.live()[0]!.port, ['CLUSTER', 'KEYSLOT', key]));
  }

  /** The cluster as a live node sees it. */
  async view(): Promise<NodeView[]> {
    return parseClusterNodes(await this.command(this.live()[0]!.port, ['CLUSTER', 'NODES']));
  }

  /** The master serving `slot` now. */
  async masterOf(slot: number): Promise<NodeView> {
    const master = (await this.view()).find(
      (n) => n.role === 'master' && !n.failed && n.slots.some(([a, b]) => slot >= a && slot <= b),
    );
    if (!master) throw new StackError(`no master serves slot ${slot}`);
    return master;
  }

  /**
   * SIGKILLs the master serving `slot` (a crash: no failover handshake) and, unless `wait` is false, waits until one of
   * its replicas is promoted and the cluster is ok again. Returns the killed port and the promoted one.
   */
  async killMasterOf(
    slot: number,
    opts: { wait?: boolean; timeoutMs?: number } = {},
  ): Promise<{ killed: number; promoted?: number }> {
    const master = await this.masterOf(slot);
    const node = this.nodes.find((n) => n.port === master.port)!;
    await node.proc?.kill();
    removePidFile(this.o.dir, pidName(node.port));
    this.log(`redis cluster: killed master 127.0.0.1:${node.port} (slot ${slot})`);
    if (opts.wait === false) return { killed: node.port };
    return { killed: node.port, promoted: await this.waitForMasterOf(slot, node.port, opts.timeoutMs) };
  }

  /** Waits until a master other than `formerPort` serves `slot` and every live node says cluster_state:ok; its port. */
  async waitForMasterOf(slot: number, formerPort: number, timeoutMs = READY_TIMEOUT_MS): Promise<number> {
    let promoted = 0;
    await waitFor(
      `a new master for slot ${slot}`,
      async () => {
        const master = await this.masterOf(slot);
        if (master.port === formerPort) return false;
        promoted = master.port;
        return this.allOk();
      },
      timeoutMs,
    );
    this.log(`redis cluster: 127.0.0.1:${promoted} now serves slot ${slot}`);
    return promoted;
  }

  /** Starts a stopped or killed node again on its port: it rejoins (a former master comes back as a replica). */
  async restart(port: number): Promise<void> {
    const node = this.nodes.find((n) => n.port === port);
    if (!node) throw new StackError(`no cluster node on port ${port}`);
    if (node.proc?.alive()) return;
    await this.launch(node);
  }

  /** Sends one command to the node on `port` with redis-cli; its raw answer. */
  async command(port: number, args: string[]): Promise<string> {
    const { stdout } = await run(this.cli, ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5_000 });
    return stdout.trim();
  }

  // -------------------------------------------------------------------------------------------------------

  private live(): ClusterNode[] {
    const live = this.nodes.filter((n) => n.proc?.alive());
    if (live.length === 0) throw new StackError('no redis cluster node is running');
    return live;
  }

  private async allOk(): Promise<boolean> {
    const states = await Promise.all(this.live().map((n) => this.command(n.port, ['CLUSTER', 'INFO'])));
    return states.every((s) => /cluster_state:ok/.test(s));
  }

  /** Every slot served, every node ok, `replicas` replicas each linked to its master and in sync. */
  private async waitHealthy(masters: number, replicas: number, timeoutMs: number): Promise<void> {
    await waitFor(
      'redis cluster',
      async () => {
        const view = await this.view();
        if (view.filter((n) => n.role === 'master' && n.slots.length > 0).length !== masters) return false;
        const linked = view.filter((n) => n.role === 'replica' && !n.failed);
        if (linked.length !== replicas || !(await this.allOk())) return false;
        const links = await Promise.all(linked.map((n) => this.command(n.port, ['INFO', 'replication'])));
        return links.every((text) => /master_link_status:up/.test(text));
      },
      timeoutMs,
      this.nodes.flatMap((n) => (n.proc ? [n.proc] : [])),
    );
  }

  private async startNode(): Promise<ClusterNode> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const busPort = await freePort();
      const node: ClusterNode = { port, busPort, dir: path.join(this.root, String(port)) };
      try {
        await this.launch(node);
        return node;
      } catch (err) {
        // A lost race for a free port: another one.
        if (attempt >= 5 || !/Address already in use|bind/i.test(String(err))) throw err;
      }
    }
  }

  private async launch(node: ClusterNode): Promise<void> {
    fs.mkdirSync(node.dir, { recursive: true });
    const logFile = path.join(node.dir, 'redis.log');
    // prettier-ignore
    const args = [
      '--port', String(node.port), '--cluster-port', String(node.busPort), '--bind', '127.0.0.1',
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf',
      '--cluster-node-timeout', String(this.o.nodeTimeoutMs ?? 1000),
      // A replica may be promoted however long its link was down (locally, a slow host must not block a failover).
      '--cluster-replica-validity-factor', '0',
      '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', node.dir, '--logfile', '',
    ];
    node.proc = await Child.start({
      name: pidName(node.port),
      cmd: this.bin,
      args,
      logFile,
      cwd: node.dir,
      stopSteps: STOP_STEPS,
    });
    writePidFile(this.o.dir, pidName(node.port), node.proc.pid, { port: node.port, dir: node.dir });
    const proc = node.proc;
    await waitFor(
      'redis cluster node',
      async () => (await this.command(node.port, ['PING'])) === 'PONG',
      READY_TIMEOUT_MS,
      [proc],
    ).catch((err: unknown) => {
      throw new StackError(`redis cluster node on port ${node.port} did not start: ${String(err)}`, 1, proc.tail());
    });
  }

  private async cliRun(args: string[], timeoutMs: number): Promise<void> {
    try {
      await run(this.cli, args, { timeout: timeoutMs });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new StackError(
        `redis-cli ${args.slice(0, 2).join(' ')} failed: ${e.message}`,
        1,
        `${e.stdout}\n${e.stderr}`,
      );
    }
  }
}

const pidName = (port: number) => `redis-cluster-${port}`;

/** CLUSTER NODES' lines: `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot>...`. */
export function parseClusterNodes(text: string): NodeView[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.trim().split(' ');
      const flagSet = new Set(flags!.split(','));
      return {
        id: id!,
        port: Number(/:(\d+)@/.exec(address!)?.[1]),
        role: flagSet.has('master') ? 'master' : 'replica',
        failed: flagSet.has('fail') || flagSet.has('fail?') || flagSet.has('noaddr'),
        ...(master && master !== '-' ? { masterId: master } : {}),
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [a, b] = s.split('-').map(Number);
            return [a!, b ?? a!] as [number, number];
          }),
      } satisfies NodeView;
    });
}

/** Stops redis-servers an earlier run left in `dir`'s redis-cluster/ (a test killed mid-way). */
export async function stopStaleRedisCluster(dir: string): Promise<string[]> {
  const root = path.join(dir, 'redis-cluster');
  if (!fs.existsSync(root)) return [];
  const real = realpathOr(root);
  const stopped: string[] = [];
  for (const pid of allPids()) {
    const cwd = procReadlink(pid, 'cwd');
    if (cwd && path.dirname(cwd) === real && /redis-server/.test(procReadlink(pid, 'exe') ?? '') && isAlive(pid)) {
      await killAndWait(pid, STOP_STEPS);
      stopped.push(`redis cluster node ${pid}`);
    }
  }
  return stopped;
}
