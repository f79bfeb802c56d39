/**
 * The few `Reflect` metadata functions tsyringe (a dependency of
 * @peculiar/x509) checks for at load time. provkit has no reflect-metadata
 * dependency; this test-only stand-in stores metadata in a WeakMap, which is
 * all x509's decorators need. Import it before `@peculiar/x509`.
 *
 * PENDING (lead): a devDependency on `reflect-metadata` would replace this file.
 */
type Key = unknown;
const store = new WeakMap<object, Map<string | symbol | undefined, Map<Key, unknown>>>();

function table(target: object, prop: string | symbol | undefined, create: boolean): Map<Key, unknown> | undefined {
  let byProp = store.get(target);
  if (!byProp) {
    if (!create) return undefined;
    byProp = new Map();
    store.set(target, byProp);
  }
  let t = byProp.get(prop);
  if (!t && create) {
    t = new Map();
    byProp.set(prop, t);
  }
  return t;
}

interface ReflectMetadata {
  defineMetadata(key: Key, value: unknown, target: object, prop?: string | symbol): void;
  getOwnMetadata(key: Key, target: object, prop?: string | symbol): unknown;
  getMetadata(key: Key, target: object, prop?: string | symbol): unknown;
  hasMetadata(key: Key, target: object, prop?: string | symbol): boolean;
  hasOwnMetadata(key: Key, target: object, prop?: string | symbol): boolean;
  metadata(key: Key, value: unknown): (target: object, prop?: string | symbol) => void;
}

const R = Reflect as unknown as Partial<ReflectMetadata>;
if (typeof R.getMetadata !== 'function') {
  const shim: ReflectMetadata = {
    defineMetadata: (key, value, target, prop) => void table(target, prop, true)?.set(key, value),
    getOwnMetadata: (key, target, prop) => table(target, prop, false)?.get(key),
    getMetadata(key, target, prop) {
      for (let t: object | null = target; t !== null; t = Object.getPrototypeOf(t) as object | null) {
        const m = table(t, prop, false);
        if (m?.has(key)) return m.get(key);
      }
      return undefined;
    },
    hasOwnMetadata: (key, target, prop) => table(target, prop, false)?.has(key) ?? false,
    hasMetadata(key, target, prop) {
      return shim.getMetadata(key, target, prop) !== undefined;
    },
    metadata: (key, value) => (target, prop) => shim.defineMetadata(key, value, target, prop),
  };
  Object.assign(Reflect, shim);
}

export {};
