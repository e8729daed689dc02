import { z } from 'zod';
import { stringify } from 'yaml';
import { CATEGORY } from './meta.js';
import type { CustomResourceType } from './resource.js';

type JsonSchema = Record<string, unknown>;

/** Formats the Kubernetes API server validates; any other format would be rejected or ignored. */
const KUBERNETES_FORMATS = new Set([
  'date-time',
  'uuid',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'byte',
  'date',
]);
const UNSTRUCTURAL_KEYWORDS = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'const'];

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords of zod's output that a structural schema drops, each with why. */
function isDropped(key: string, value: unknown, node: JsonSchema): boolean {
  if (key === '$schema' || key === 'propertyNames' || key === 'id') return true;
  if (key === 'additionalProperties') return value === false; // the API server prunes unknown fields
  if (key === 'pattern') return typeof node.format === 'string'; // zod spells its formats out as patterns
  if (key === 'format') return typeof value !== 'string' || !KUBERNETES_FORMATS.has(value);
  if (key === 'minimum' || key === 'maximum') return Math.abs(Number(value)) === Number.MAX_SAFE_INTEGER;
  return false;
}

function assertStructural(node: JsonSchema, path: string): void {
  const union = UNSTRUCTURAL_KEYWORDS.find((keyword) => keyword in node);
  if (union !== undefined) throw new Error(`${path}: "${union}" cannot appear in a structural CRD schema`);
  if (typeof node.type !== 'string' && node['x-kubernetes-preserve-unknown-fields'] !== true) {
    throw new Error(`${path}: every node of a structural CRD schema needs a type`);
  }
}

/**
 * Rewrites zod's OpenAPI 3.0 output into a structural schema the API server accepts:
 * every node typed, no unions or references, no `additionalProperties: false` beside
 * `properties` (the API server prunes unknown fields instead), only formats it knows.
 */
export function toStructuralSchema(node: JsonSchema, path = '<root>'): JsonSchema {
  assertStructural(node, path);
  // The description first, so that a reader of the YAML finds it right under the field's name.
  const out: JsonSchema = typeof node.description === 'string' ? { description: node.description } : {};
  for (const [key, value] of Object.entries(node)) {
    if (!isDropped(key, value, node)) out[key] = convertChild(key, value, path);
  }
  return out;
}

function convertChild(key: string, value: unknown, path: string): unknown {
  if (key === 'properties' && isSchema(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([name, child]) => [
        name,
        toStructuralSchema(asSchema(child, `${path}.${name}`), `${path}.${name}`),
      ]),
    );
  }
  if ((key === 'items' || key === 'additionalProperties') && isSchema(value)) {
    return toStructuralSchema(value, `${path}[${key}]`);
  }
  return value;
}

function asSchema(value: unknown, path: string): JsonSchema {
  if (!isSchema(value)) throw new Error(`${path}: expected a schema object`);
  return value;
}

// The envelope every Kubernetes object shares, described in Kubernetes' own words.
const API_VERSION_DESCRIPTION =
  'APIVersion defines the versioned schema of this representation of an object, e.g. agentry.dev/v1alpha1.';
const KIND_DESCRIPTION = 'Kind is a string value representing the REST resource this object represents.';

function openApiSchema(type: CustomResourceType): JsonSchema {
  const convert = (schema: z.ZodType, name: string) =>
    toStructuralSchema(
      z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'throw' }),
      name,
    );
  return {
    description: type.description,
    type: 'object',
    properties: {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
      kind: { description: KIND_DESCRIPTION, type: 'string' },
      // The API server refuses anything on metadata but its type (it describes ObjectMeta itself).
      metadata: { type: 'object' },
      spec: convert(type.specSchema, 'spec'),
      status: convert(type.statusSchema, 'status'),
    },
    required: ['spec'],
  };
}

/** The CustomResourceDefinition for one Agentry kind, generated from its zod schemas. */
export function customResourceDefinition(type: CustomResourceType): JsonSchema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${type.plural}.${type.group}`,
      labels: { 'app.kubernetes.io/part-of': 'agentry' },
    },
    spec: {
      group: type.group,
      names: {
        kind: type.kind,
        listKind: type.listKind,
        plural: type.plural,
        singular: type.singular,
        shortNames: [...type.shortNames],
        categories: [CATEGORY],
      },
      scope: type.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: type.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: type.printerColumns.map((column) => ({ ...column })),
          schema: { openAPIV3Schema: openApiSchema(type) },
        },
      ],
    },
  };
}

const HEADER = '# Generated by `npm run crds` from the zod schemas in crds/. Do not edit.\n';

/** The YAML file for one kind's CRD, as committed under crds/generated/. */
export function customResourceDefinitionYaml(type: CustomResourceType): string {
  return HEADER + stringify(customResourceDefinition(type), { lineWidth: 0 });
}

export const crdFileName = (type: CustomResourceType): string => `${type.plural}.${type.group}.yaml`;
