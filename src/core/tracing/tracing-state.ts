/** Whether this process traces, and how to flush its spans: set by start-tracing.ts; this file loads nothing of the SDK. */
let flusher: (() => Promise<void>) | undefined;

export function markTracingStarted(flush: () => Promise<void>): void {
  flusher = flush;
}

/** True once the SDK runs in this process (register.ts found tracing turned on). */
export function tracingStarted(): boolean {
  return flusher !== undefined;
}

/**
 * Sends the spans still buffered (the batch processor sends every few seconds) before the process exits: a process
 * that ends through process.exit() skips 'beforeExit'. At most `timeoutMs`; nothing to do when tracing is off.
 */
export async function flushTraces(timeoutMs = 2000): Promise<void> {
  if (!flusher) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([flusher().catch(() => undefined), timeout]);
  clearTimeout(timer);
}
