import { randomBytes } from 'node:crypto';

interface OpenJob {
  key: string;
  ids: number[];
  /** The requests whose deliveries these are (their reqId). */
  reqIds: string[];
  /** Their trace contexts (W3C traceparent; none when tracing is off). */
  traces: string[];
  /** INSERTs tagged with this key that have not settled yet. */
  writing: number;
  closed: boolean;
}

/**
 * Groups the receiver's commits into queue jobs: every batch stored during one window of `windowMs` is
 * tagged with the same job key (stored on its rows as batch_id), and once the window has closed and its last
 * INSERT has settled, `emit` gets the key and every delivery id stored under it: one job for all of them.
 * Under load a job then carries many commits' deliveries, so the queue and the worker pay per job, not per
 * commit. Keys are unique across API processes (random prefix) and within one (counter).
 */
export class JobWindow {
  private open?: OpenJob;
  private readonly prefix = randomBytes(6).toString('base64url');
  private counter = 0;

  constructor(
    private readonly windowMs: number,
    private readonly emit: (key: string, deliveryIds: number[], reqIds: string[], traces: string[]) => void,
  ) {}

  /** Runs one INSERT under the open job's key (opening one if needed); its ids join that job once stored. */
  async write(
    insert: (key: string) => Promise<number[]>,
    reqIds: string[] = [],
    traces: string[] = [],
  ): Promise<number[]> {
    const job = this.current();
    job.writing++;
    try {
      const ids = await insert(job.key);
      job.ids.push(...ids);
      job.reqIds.push(...reqIds);
      job.traces.push(...traces);
      return ids;
    } finally {
      job.writing--;
      this.settle(job);
    }
  }

  /** Closes the open window now (shutdown): its job is emitted once its INSERTs have settled. */
  flush(): void {
    if (this.open) this.close(this.open);
  }

  private current(): OpenJob {
    if (this.open) return this.open;
    const job: OpenJob = {
      key: `${this.prefix}-${(this.counter++).toString(36)}`,
      ids: [],
      reqIds: [],
      traces: [],
      writing: 0,
      closed: false,
    };
    this.open = job;
    setTimeout(() => this.close(job), this.windowMs).unref();
    return job;
  }

  private close(job: OpenJob): void {
    if (job.closed) return;
    job.closed = true;
    if (this.open === job) this.open = undefined;
    this.settle(job);
  }

  private settle(job: OpenJob): void {
    if (job.closed && job.writing === 0 && job.ids.length > 0) {
      const [ids, reqIds, traces] = [job.ids, job.reqIds, job.traces];
      job.ids = [];
      job.reqIds = [];
      job.traces = [];
      this.emit(job.key, ids, reqIds, traces);
    }
  }
}
