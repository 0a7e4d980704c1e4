/** Where spans go: an OTLP collector over HTTP (protobuf or JSON bodies), and/or stdout (one object per span). */
export type TraceExporterKind = 'otlp' | 'console';
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingSettings {
  exporters: TraceExporterKind[];
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf (the spec's default). */
  protocol: OtlpProtocol;
  /** OTEL_SERVICE_NAME, else this process's own name (bmapi-api, bmapi-worker). */
  serviceName: string;
}

const EXPORTERS: readonly string[] = ['otlp', 'console'];

/**
 * Whether this process traces, read from the standard OpenTelemetry variables only (the OTel exporters read the rest
 * of theirs themselves: endpoint, headers, timeout, sampler, batch sizes). Off unless one of them asks for it:
 * - OTEL_SDK_DISABLED=true: off, whatever else is set;
 * - OTEL_TRACES_EXPORTER given: `none` is off; otherwise its list (`otlp`, `console`, comma-separated) is used;
 * - else an OTLP endpoint given (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): on, with `otlp`;
 * - else off (unlike the SDK's own default, which exports to localhost:4318 when nothing is set).
 * A value it cannot honour (an unknown exporter, the gRPC protocol, which is not installed) throws, naming the
 * variable: the process stops rather than run without the traces it was asked for.
 */
export function tracingSettings(env: NodeJS.ProcessEnv, defaultServiceName: string): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const listed = env.OTEL_TRACES_EXPORTER?.trim();
  let exporters: TraceExporterKind[];
  if (listed) {
    const names = [...new Set(listed.split(',').map((name) => name.trim().toLowerCase()))].filter(Boolean);
    if (names.includes('none')) return undefined;
    const unknown = names.filter((name) => !EXPORTERS.includes(name));
    if (unknown.length > 0)
      throw new Error(`OTEL_TRACES_EXPORTER=${listed}: unknown exporter ${unknown.join(', ')} (otlp, console or none)`);
    exporters = names as TraceExporterKind[];
  } else if (env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()) {
    exporters = ['otlp'];
  } else {
    return undefined;
  }
  return { exporters, protocol: protocolOf(env), serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName };
}

function protocolOf(env: NodeJS.ProcessEnv): OtlpProtocol {
  const [name, value] = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim()
    ? ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL.trim()]
    : ['OTEL_EXPORTER_OTLP_PROTOCOL', env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf'];
  if (value === 'http/protobuf' || value === 'http/json') return value;
  throw new Error(`${name}=${value}: only http/protobuf and http/json are supported (no gRPC exporter installed)`);
}

/** The process's default service name, from the entry point it runs: the worker's, or else the API's. */
export function serviceNameOf(entryPoint: string | undefined): string {
  return entryPoint && /[/\\]worker[/\\]main\.[cm]?[jt]s$/.test(entryPoint) ? 'bmapi-worker' : 'bmapi-api';
}
