import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/**
 * A registry of names that lets every other piece of metadata (the `.describe()` texts zod keeps in
 * its global registry) show through: converting with it names the registered schemas and keeps
 * the descriptions. A private registry, so the CRD generator (which reads the global one) never
 * sees these names.
 */
export class SchemaNames extends z.core.$ZodRegistry<z.core.JSONSchemaMeta> {
  /** Names `schema` (`id`) and describes it in one line. */
  name(schema: z.core.$ZodType, id: string, description: string): this {
    return this.add(schema, { id, description });
  }

  override get(schema: z.core.$ZodType): z.core.JSONSchemaMeta | undefined {
    const { id: _notOurs, ...global } = z.globalRegistry.get(schema) ?? {};
    const merged = { ...global, ...super.get(schema) };
    return Object.keys(merged).length > 0 ? merged : undefined;
  }
}

const DEFS = '#/$defs/';
const COMPONENTS = '#/components/schemas/';

/** The schema with every `#/$defs/X` reference pointing at `components.schemas` instead. */
function pointingAtComponents(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(pointingAtComponents);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith(DEFS)
        ? `${COMPONENTS}${value.slice(DEFS.length)}`
        : pointingAtComponents(value),
    ]),
  );
}

/**
 * A request schema as the server accepts it: unknown fields are ignored (api/lenient-body.ts), so
 * no object in it is closed, though the zod schema is strict to find them.
 */
function acceptingUnknownFields(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(acceptingUnknownFields);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
      .map(([key, value]) => [key, acceptingUnknownFields(value)]),
  );
}

const isRecord = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Converts zod schemas for the document and gathers the named ones into `components.schemas`: a
 * schema registered in `responses` (converted as output) or `requests` (as input) becomes a
 * `$ref` wherever it occurs. A request's schema accepts unknown fields (they are ignored).
 */
export class Components {
  private readonly schemas: Record<string, JsonSchema> = {};

  constructor(private readonly names: { responses: SchemaNames; requests: SchemaNames }) {}

  /**
   * The schema of a response (`output`) or a request (`input`). `nameIfAnonymous` names a request
   * body that has no name of its own, so that clients get a type for it. A request's unknown
   * fields are accepted unless `strict` (a body the handler reads itself, refusing them).
   */
  schemaOf(
    schema: z.ZodType,
    io: 'input' | 'output',
    options: { nameIfAnonymous?: string; strict?: boolean } = {},
  ): JsonSchema {
    const { nameIfAnonymous, strict = false } = options;
    const registry = io === 'output' ? this.names.responses : this.names.requests;
    const converted = z.toJSONSchema(schema, { io, metadata: registry, unrepresentable: 'any' });
    const mapped = pointingAtComponents(
      io === 'input' && !strict ? acceptingUnknownFields(converted) : converted,
    );
    if (!isRecord(mapped)) throw new Error('OpenAPI: a converted schema is not an object');
    // The document's dialect is OpenAPI 3.1's, so no `$schema`; the definitions become components.
    const { $defs: defs, $schema: _dialect, ...root } = mapped;
    for (const [name, def] of Object.entries(isRecord(defs) ? defs : {})) {
      if (isRecord(def)) this.add(name, def);
    }
    if (nameIfAnonymous === undefined || '$ref' in root) return root;
    this.add(nameIfAnonymous, root);
    return { $ref: `${COMPONENTS}${nameIfAnonymous}` };
  }

  /** A schema written by hand (no zod schema states it), named. */
  named(name: string, schema: JsonSchema): JsonSchema {
    this.add(name, schema);
    return { $ref: `${COMPONENTS}${name}` };
  }

  /** `components.schemas`, by name. */
  all(): Record<string, JsonSchema> {
    return Object.fromEntries(Object.entries(this.schemas).sort(([a], [b]) => a.localeCompare(b)));
  }

  private add(name: string, schema: JsonSchema): void {
    const existing = this.schemas[name];
    if (existing !== undefined && !isDeepStrictEqual(existing, schema)) {
      // Two shapes under one name: a request schema also used in responses needs a name of each kind.
      throw new Error(`OpenAPI: two different schemas are named ${name}`);
    }
    this.schemas[name] = schema;
  }
}
