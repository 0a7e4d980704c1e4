import 'reflect-metadata';
import {
  Injectable,
  Module,
  type DynamicModule,
  type ForwardReference,
  type Provider,
  type Type,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { PlatformAdminModule } from './console/operators/platform-admin.module.js';
import { AppConfig } from './core/config/app-config.js';
import { WorkerModule } from './worker/worker.module.js';

/**
 * docs/architecture.md, "Modules state who owns what": a repository or service is provided by one module, the one
 * that owns it, and whoever needs it imports that module. Provided twice, it would be two instances (two caches,
 * two listeners) and two places to keep in step. Checked over every module the API, the worker and the
 * platform-admin command are built from, as their `@Module` metadata and dynamic modules declare them.
 */

type ModuleRef = Type | DynamicModule | ForwardReference | Promise<DynamicModule>;

/** Nest's enhancers are provided once per use on purpose (several guards, in order). */
const MULTI_PROVIDERS = new Set<unknown>([APP_GUARD, APP_PIPE, APP_FILTER, APP_INTERCEPTOR]);

const tokenOf = (provider: Provider): unknown => (typeof provider === 'function' ? provider : provider.provide);
const nameOf = (token: unknown): string =>
  typeof token === 'function' ? token.name : typeof token === 'symbol' ? token.toString() : String(token);

/** Each module class reachable from `roots` through `imports`, with every provider it declares. */
function modulesOf(roots: ModuleRef[]): Map<Type, Provider[]> {
  const modules = new Map<Type, Provider[]>();
  const seen = new Set<unknown>();
  const visit = (ref: ModuleRef): void => {
    if (ref instanceof Promise) throw new Error('an async dynamic module: this check reads modules synchronously');
    if ('forwardRef' in ref) return visit(ref.forwardRef() as ModuleRef);
    if (seen.has(ref)) return;
    seen.add(ref);
    const cls = typeof ref === 'function' ? ref : ref.module;
    const dynamic: Partial<DynamicModule> = typeof ref === 'function' ? {} : ref;
    const providers = [...((Reflect.getMetadata('providers', cls) as Provider[]) ?? []), ...(dynamic.providers ?? [])];
    // The same module class built twice (CoreModule.forRoot for the API and for the worker) is one owner.
    modules.set(cls, [...(modules.get(cls) ?? []), ...providers]);
    [
      ...((Reflect.getMetadata('imports', cls) as ModuleRef[]) ?? []),
      ...((dynamic.imports ?? []) as ModuleRef[]),
    ].forEach(visit);
  };
  roots.forEach(visit);
  return modules;
}

/** Every provider token declared by more than one module class, with those modules' names. */
function providedTwice(roots: ModuleRef[]): Record<string, string[]> {
  const owners = new Map<unknown, Set<string>>();
  for (const [module, providers] of modulesOf(roots)) {
    for (const token of providers.map(tokenOf).filter((t) => !MULTI_PROVIDERS.has(t)))
      owners.set(token, (owners.get(token) ?? new Set()).add(module.name));
  }
  return Object.fromEntries(
    [...owners].filter(([, modules]) => modules.size > 1).map(([token, modules]) => [nameOf(token), [...modules]]),
  );
}

const config = AppConfig.fromEnv({
  DATABASE_URL: 'postgresql://unused:unused@127.0.0.1:9/unused',
  REDIS_URL: 'redis://127.0.0.1:9',
  UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v25.0',
  WHATSAPP_APP_SECRET: 'module-walk-only-secret',
  WHATSAPP_VERIFY_TOKEN: 'module-walk-only-token',
  ENCRYPTION_KEY: '11'.repeat(32),
  LOG_LEVEL: 'silent',
});

describe('each provider has one owning module', () => {
  it('no class or token is provided by two modules of the API, the worker or the platform-admin command', () => {
    const roots = [AppModule.forRoot(config), WorkerModule.forRoot(config), PlatformAdminModule.forRoot(config)];
    const modules = [...modulesOf(roots).keys()].map((m) => m.name);
    // The walk reaches the domain modules through the processes' imports (so a check of nothing cannot pass).
    expect(modules).toEqual(
      expect.arrayContaining(['AccountsModule', 'MessagesModule', 'ConsoleModule', 'OperatorsModule', 'CoreModule']),
    );
    expect(providedTwice(roots)).toEqual({});
  });

  it('names the class and both modules when one is provided twice, through a dynamic module or a forward reference', () => {
    @Injectable()
    class SharedRepository {}
    @Module({ providers: [SharedRepository], exports: [SharedRepository] })
    class OwnerModule {}
    @Module({})
    class CopyModule {}
    @Module({ imports: [OwnerModule, { forwardRef: () => ({ module: CopyModule, providers: [SharedRepository] }) }] })
    class RootModule {}
    expect(providedTwice([RootModule])).toEqual({ SharedRepository: ['OwnerModule', 'CopyModule'] });
  });
});
