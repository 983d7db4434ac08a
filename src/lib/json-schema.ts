import { z } from 'zod';

/** zod 4 -> OpenAPI 3.1: each `.meta({ id })` shape's `$defs` entry moves to `components.schemas`. */
export type JsonSchema = Record<string, unknown>;

export type Components = Map<string, JsonSchema>;

const DEFS_PREFIX = '#/$defs/';
const COMPONENTS_PREFIX = '#/components/schemas/';
const SAFE_INT = Number.MAX_SAFE_INTEGER;

export function toOpenApiSchema(schema: z.ZodType, io: 'input' | 'output', components: Components): JsonSchema {
  // Output shapes own the plain names: an input variant that differs (defaults are optional there) is `<Id>Input`.
  if (io === 'input') toOpenApiSchema(schema, 'output', components);
  const raw = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  const { $schema: _dialect, $defs, ...rest } = raw;
  const defs = ($defs ?? {}) as Record<string, JsonSchema>;
  const renames = new Map<string, string>();
  // A parent whose child was renamed differs too (its $ref changed), hence the fixpoint.
  for (let changed = io === 'input'; changed; ) {
    changed = false;
    for (const [id, def] of Object.entries(defs)) {
      if (renames.has(id) || JSON.stringify(components.get(id)) === JSON.stringify(tidy(def, renames))) continue;
      renames.set(id, `${id}Input`);
      changed = true;
    }
  }
  for (const [id, def] of Object.entries(defs)) components.set(renames.get(id) ?? id, tidy(def, renames) as JsonSchema);
  return tidy(rest, renames) as JsonSchema;
}

/** `$defs` references to components, without zod's safe-integer bounds and its regex beside a `format`. */
function tidy(node: unknown, renames: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => tidy(n, renames));
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  const obj = node as Record<string, unknown>;
  for (const [k, v] of Object.entries(obj)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith(DEFS_PREFIX)) {
      const id = v.slice(DEFS_PREFIX.length);
      out[k] = COMPONENTS_PREFIX + (renames.get(id) ?? id);
      continue;
    }
    if (obj.type === 'integer' && ((k === 'minimum' && v === -SAFE_INT) || (k === 'maximum' && v === SAFE_INT)))
      continue;
    if (k === 'pattern' && (obj.format === 'date-time' || obj.format === 'date' || obj.format === 'uri')) continue;
    out[k] = tidy(v, renames);
  }
  return out;
}

/** Named shapes written in place, for the Bazaar declaration (its validators reject an unresolvable `$ref`). */
export function inlineSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const components: Components = new Map();
  const root = toOpenApiSchema(schema, io, components);
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (!node || typeof node !== 'object') return node;
    const { $ref: ref, ...siblings } = node as Record<string, unknown>;
    if (typeof ref === 'string' && ref.startsWith(COMPONENTS_PREFIX))
      return {
        ...(inline(components.get(ref.slice(COMPONENTS_PREFIX.length))) as object),
        ...(inline(siblings) as object),
      };
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inline(v)]));
  };
  return inline(root) as JsonSchema;
}
