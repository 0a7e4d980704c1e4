import type { DestinationStream } from 'pino';

/** One JSON log line as the process writes it. */
export type LogLine = Record<string, unknown> & { msg: string; level: number };

/** A pino destination that keeps the lines, parsed (pino writes one JSON object per line). */
export class LogCapture {
  readonly lines: LogLine[] = [];
  readonly destination: DestinationStream = {
    write: (chunk: string) => {
      for (const line of chunk.split('\n')) if (line) this.lines.push(JSON.parse(line) as LogLine);
    },
  };

  /** Lines with `field` equal to `value`. */
  where(field: string, value: unknown): LogLine[] {
    return this.lines.filter((l) => l[field] === value);
  }
}
