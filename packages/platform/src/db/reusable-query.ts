import { CompiledQuery, type Compilable } from 'kysely';

/**
 * A query built once and reused with new values: Kysely builds and compiles a query tree
 * on every call, which on the hottest paths (the API key lookup and the quota charge, once
 * per request each) costs more than running the statement. The query is compiled with
 * sentinel values; each call substitutes the real ones into the parameter list.
 *
 * Sentinels must be values that cannot otherwise appear among the parameters.
 */
export function reusableQuery<V extends Record<string, unknown>, R>(build: (values: V) => Compilable<R>, sentinels: V): (values: V) => CompiledQuery<R> {
  let compiled: { sql: string; slots: Array<{ key: keyof V } | { value: unknown }> } | undefined;
  const keys = Object.keys(sentinels) as Array<keyof V>;
  return (values) => {
    if (!compiled) {
      const q = build(sentinels).compile();
      compiled = {
        sql: q.sql,
        slots: q.parameters.map((p) => {
          const key = keys.find((k) => Object.is(sentinels[k], p));
          return key === undefined ? { value: p } : { key };
        }),
      };
      const used = new Set(compiled.slots.flatMap((s) => ('key' in s ? [s.key] : [])));
      if (used.size !== keys.length) throw new Error(`reusableQuery: sentinel(s) ${keys.filter((k) => !used.has(k)).join(', ')} not found in the compiled parameters`);
    }
    return CompiledQuery.raw(compiled.sql, compiled.slots.map((s) => ('key' in s ? values[s.key] : s.value))) as CompiledQuery<R>;
  };
}
