import { DiscoveryService, MetadataScanner } from '@nestjs/core';

/**
 * Declared, not registered: an area marks the method that answers an extension point with a decorator
 * (`@OnDomainEvent`, `@AdminSettingsField`, `@ResolvesBuildToken`) and the owner of the extension
 * point finds every such method at bootstrap through Nest's DiscoveryService — so who reacts to what
 * is read where the work is done, and no area calls another's `register...` in `onModuleInit`.
 */

/** A method decorator that records `meta` (several decorators on one method add up). */
export function declareMethod<M>(key: symbol, meta: M): MethodDecorator {
  return (_target, _key, desc) => {
    const fn = desc.value as object;
    const list = (Reflect.getMetadata(key, fn) as M[] | undefined) ?? [];
    Reflect.defineMetadata(key, [...list, meta], fn);
  };
}

export interface DeclaredMethod<M> {
  /** `Class.method`: the label of logs and metrics. */
  id: string;
  meta: M;
  call: (...args: unknown[]) => unknown;
}

/** Every method of every (singleton) provider declared with `key`, one entry per declaration. */
export function findDeclaredMethods<M>(discovery: DiscoveryService, scanner: MetadataScanner, key: symbol): DeclaredMethod<M>[] {
  const out: DeclaredMethod<M>[] = [];
  for (const wrapper of discovery.getProviders()) {
    const instance = wrapper.instance as object | undefined;
    if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
    const proto = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const method of scanner.getAllMethodNames(proto)) {
      const fn = proto[method] as (...args: unknown[]) => unknown;
      const metas = Reflect.getMetadata(key, fn) as M[] | undefined;
      for (const meta of metas ?? []) out.push({ id: `${instance.constructor.name}.${method}`, meta, call: (...args) => fn.apply(instance, args) });
    }
  }
  return out;
}
