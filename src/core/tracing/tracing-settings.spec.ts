import { serviceNameOf, tracingSettings } from './tracing-settings.js';

describe('tracingSettings: when the standard OTEL_* variables turn tracing on', () => {
  const on = (env: NodeJS.ProcessEnv) => tracingSettings(env, 'bmapi-api');

  it('is off when nothing asks for it (not the SDK default of exporting to localhost:4318)', () => {
    expect(on({})).toBeUndefined();
    expect(on({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toBeUndefined();
  });

  it('is on with OTLP when an endpoint is given, for all signals or for traces', () => {
    expect(on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })).toEqual({
      exporters: ['otlp'],
      protocol: 'http/protobuf',
      serviceName: 'bmapi-api',
    });
    expect(on({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })?.exporters).toEqual(['otlp']);
  });

  it('follows OTEL_TRACES_EXPORTER: its list, or none', () => {
    expect(on({ OTEL_TRACES_EXPORTER: 'console' })?.exporters).toEqual(['console']);
    expect(on({ OTEL_TRACES_EXPORTER: 'otlp, console' })?.exporters).toEqual(['otlp', 'console']);
    expect(on({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
  });

  it('is off with OTEL_SDK_DISABLED=true, whatever else is set', () => {
    expect(on({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'console' })).toBeUndefined();
    expect(on({ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toBeUndefined();
    expect(on({ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'console' })?.exporters).toEqual(['console']);
  });

  it('takes the traces protocol over the general one, and OTEL_SERVICE_NAME over the process name', () => {
    const s = on({
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'api-eu-1',
    });
    expect(s).toEqual({ exporters: ['otlp'], protocol: 'http/json', serviceName: 'api-eu-1' });
  });

  it('refuses what it cannot honour, naming the variable', () => {
    expect(() => on({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(
      'OTEL_TRACES_EXPORTER=zipkin: unknown exporter zipkin',
    );
    expect(() => on({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc',
    );
  });

  it('names the worker bmapi-worker and any other entry point bmapi-api', () => {
    expect(serviceNameOf('/app/dist/src/worker/main.js')).toBe('bmapi-worker');
    expect(serviceNameOf('/app/dist/src/main.js')).toBe('bmapi-api');
    expect(serviceNameOf(undefined)).toBe('bmapi-api');
  });
});
