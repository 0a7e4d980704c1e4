import type { Worker } from 'bullmq';

/**
 * Closes a BullMQ worker: it stops taking jobs and its running ones get `graceMs` to finish. Past that they are left
 * where they are (a forced close), as a crash would leave them: their locks expire and another worker takes them
 * over. `beforeForce` runs just before the forced close (a warning, aborting the jobs' work). Resolves whether the
 * running jobs finished. A graceful close that fails counts as closed (`onError` hears why).
 */
export async function closeWorker(
  worker: Worker,
  opts: { graceMs: number; beforeForce?: () => void; onError?: (err: unknown) => void },
): Promise<boolean> {
  const graceful = worker.close().then(
    () => true,
    (err: unknown) => {
      opts.onError?.(err);
      return true;
    },
  );
  const timedOut = new Promise<false>((resolve) => setTimeout(() => resolve(false), opts.graceMs).unref());
  if (await Promise.race([graceful, timedOut])) return true;
  opts.beforeForce?.();
  await worker.close(true).catch(() => undefined);
  return false;
}
