import {
  DuckDBArrayType,
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListType,
  DuckDBListValue,
  DuckDBMapType,
  DuckDBMapValue,
  DuckDBStructType,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  DuckDBTypeId,
  DuckDBUnionValue,
  DuckDBVariantValue,
} from '@duckdb/node-api';
import type { DuckDBDataChunk, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import { isoDate, isoInstant } from './iso-time.js';

/**
 * DuckDB values as JSON that survives `JSON.parse` in any client (docs/api.md#context-lake): integers beyond
 * ±2^53 as strings, decimals as numbers unless a double would change them, dates `YYYY-MM-DD`,
 * timestamps ISO 8601 in UTC with `Z`, blobs base64, NaN and infinities as strings, nested types
 * as nested JSON. Converters are built once per column from its type, not per value.
 */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonRow = Record<string, JsonValue>;
type Convert = (value: DuckDBValue) => JsonValue;

/** Instants within ±285,000 years: their milliseconds are exact doubles. */
const MAX_EXACT_MS = 9e15;

const finiteOrText = (value: number): number | string => (Number.isFinite(value) ? value : String(value));

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

function integer(value: DuckDBValue): JsonValue {
  if (typeof value === 'bigint')
    return value <= MAX_SAFE && value >= MIN_SAFE ? Number(value) : value.toString();
  return typeof value === 'number' ? value : generic(value);
}

const double = (value: DuckDBValue): JsonValue =>
  typeof value === 'number' ? finiteOrText(value) : generic(value);

/** A FLOAT arrives widened to a double (0.1 → 0.10000000149011612); answer its shortest float32 spelling. */
function float(value: DuckDBValue): JsonValue {
  if (typeof value !== 'number') return generic(value);
  if (!Number.isFinite(value)) return String(value);
  for (let digits = 1; digits < 10; digits++) {
    const shorter = Number(value.toPrecision(digits));
    if (Math.fround(shorter) === value) return shorter;
  }
  return value;
}

/** Trailing fractional zeros off, as String(number) writes it. */
const canonicalDecimal = (text: string): string =>
  text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;

function decimal(value: DuckDBValue): JsonValue {
  if (!(value instanceof DuckDBDecimalValue)) return generic(value);
  // Up to 15 digits both operands are exact doubles and IEEE division rounds correctly: the
  // result is the double nearest the decimal, the same one JSON.parse would give for its text.
  if (value.width <= 15) return Number(value.value) / 10 ** value.scale;
  const text = value.toString();
  const asNumber = Number(text);
  return String(asNumber) === canonicalDecimal(text) ? asNumber : text;
}

function date(value: DuckDBValue): JsonValue {
  if (!(value instanceof DuckDBDateValue)) return generic(value);
  if (value.isFinite) return isoDate(value.days);
  return value.days > 0 ? 'infinity' : '-infinity';
}

/** ISO text, or DuckDB's own beyond the range where milliseconds are exact doubles. */
function isoText(ms: number, below: number, digits: number, value: DuckDBValue): string {
  return Math.abs(ms) > MAX_EXACT_MS ? String(value) : isoInstant(ms, below, digits);
}

/**
 * ISO 8601 of an instant counted in units since 1970 (`perMs` units a millisecond). Numbers when
 * they are exact (microseconds up to the year 2255): BigInt arithmetic costs ten times as much.
 */
function isoFromUnits(units: bigint, perMs: number, digits: number, value: DuckDBValue): string {
  const exact = Number(units);
  if (Number.isSafeInteger(exact)) {
    let ms = Math.floor(exact / perMs);
    let below = exact - ms * perMs;
    // The division may round across an integer near 2^53: put the remainder back in range.
    if (below < 0) [ms, below] = [ms - 1, below + perMs];
    else if (below >= perMs) [ms, below] = [ms + 1, below - perMs];
    return isoText(ms, below, digits, value);
  }
  const unit = BigInt(perMs);
  let ms = units / unit;
  let below = units % unit;
  if (below < 0n) [ms, below] = [ms - 1n, below + unit]; // BigInt division truncates toward zero
  return isoText(Number(ms), Number(below), digits, value);
}

/** ISO 8601 text of any of DuckDB's timestamp values, or undefined for another value. */
function instantText(value: DuckDBValue): string | undefined {
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) {
    if (!value.isFinite) return value.micros > 0n ? 'infinity' : '-infinity';
    return isoFromUnits(value.micros, 1000, 3, value);
  }
  if (value instanceof DuckDBTimestampNanosecondsValue) {
    if (!value.isFinite) return value.nanos > 0n ? 'infinity' : '-infinity';
    return isoFromUnits(value.nanos, 1_000_000, 6, value);
  }
  if (value instanceof DuckDBTimestampMillisecondsValue)
    return value.isFinite ? isoFromUnits(value.millis, 1, 0, value) : value.toString();
  if (value instanceof DuckDBTimestampSecondsValue)
    return value.isFinite ? isoFromUnits(value.seconds * 1000n, 1, 0, value) : value.toString();
  return undefined;
}

const timestamp = (value: DuckDBValue): JsonValue => instantText(value) ?? generic(value);

const text = (value: DuckDBValue): JsonValue => (typeof value === 'string' ? value : generic(value));

const blob = (value: DuckDBValue): JsonValue =>
  value instanceof DuckDBBlobValue ? Buffer.from(value.bytes).toString('base64') : generic(value);

/** Sets a key even when it is `__proto__`, which plain assignment would turn into a prototype. */
function setKey(target: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

const mapKey = (key: JsonValue): string => (typeof key === 'string' ? key : JSON.stringify(key));

/** By the value alone: for UNION and VARIANT members and types without a converter of their own. */
function generic(value: DuckDBValue): JsonValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return finiteOrText(value);
  if (typeof value === 'bigint') return integer(value);
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) return value.items.map(generic);
  if (value instanceof DuckDBStructValue) {
    const out: Record<string, JsonValue> = {};
    for (const [key, entry] of Object.entries(value.entries)) setKey(out, key, generic(entry));
    return out;
  }
  if (value instanceof DuckDBMapValue) {
    const out: Record<string, JsonValue> = {};
    for (const entry of value.entries) setKey(out, mapKey(generic(entry.key)), generic(entry.value));
    return out;
  }
  return genericScalar(value);
}

function genericScalar(value: DuckDBValue): JsonValue {
  if (value instanceof DuckDBUnionValue || value instanceof DuckDBVariantValue) return generic(value.value);
  if (value instanceof DuckDBDecimalValue) return decimal(value);
  if (value instanceof DuckDBDateValue) return date(value);
  if (value instanceof DuckDBBlobValue) return blob(value);
  // TIME, INTERVAL, UUID, BIT, GEOMETRY...: DuckDB's own text.
  return instantText(value) ?? String(value);
}

function listOf(type: DuckDBType): Convert {
  if (!(type instanceof DuckDBListType) && !(type instanceof DuckDBArrayType)) return generic;
  const item = converterFor(type.valueType);
  return (value) =>
    value instanceof DuckDBListValue || value instanceof DuckDBArrayValue
      ? value.items.map(item)
      : generic(value);
}

function structOf(type: DuckDBType): Convert {
  if (!(type instanceof DuckDBStructType)) return generic;
  const fields = type.entryNames.map((name, index) => {
    const entryType = type.entryTypes[index];
    return { name, convert: entryType === undefined ? generic : converterFor(entryType) };
  });
  return (value) => {
    if (!(value instanceof DuckDBStructValue)) return generic(value);
    const out: Record<string, JsonValue> = {};
    for (const field of fields) setKey(out, field.name, field.convert(value.entries[field.name] ?? null));
    return out;
  };
}

/** A MAP as a JSON object; keys that are not strings are written as their JSON text. */
function mapOf(type: DuckDBType): Convert {
  if (!(type instanceof DuckDBMapType)) return generic;
  const key = converterFor(type.keyType);
  const entryValue = converterFor(type.valueType);
  return (value) => {
    if (!(value instanceof DuckDBMapValue)) return generic(value);
    const out: Record<string, JsonValue> = {};
    for (const entry of value.entries) setKey(out, mapKey(key(entry.key)), entryValue(entry.value));
    return out;
  };
}

const CONVERTERS: Partial<Record<DuckDBTypeId, (type: DuckDBType) => Convert>> = {
  [DuckDBTypeId.BOOLEAN]: () => generic,
  [DuckDBTypeId.TINYINT]: () => integer,
  [DuckDBTypeId.SMALLINT]: () => integer,
  [DuckDBTypeId.INTEGER]: () => integer,
  [DuckDBTypeId.BIGINT]: () => integer,
  [DuckDBTypeId.UTINYINT]: () => integer,
  [DuckDBTypeId.USMALLINT]: () => integer,
  [DuckDBTypeId.UINTEGER]: () => integer,
  [DuckDBTypeId.UBIGINT]: () => integer,
  [DuckDBTypeId.HUGEINT]: () => integer,
  [DuckDBTypeId.UHUGEINT]: () => integer,
  [DuckDBTypeId.BIGNUM]: () => integer,
  [DuckDBTypeId.FLOAT]: () => float,
  [DuckDBTypeId.DOUBLE]: () => double,
  [DuckDBTypeId.DECIMAL]: () => decimal,
  [DuckDBTypeId.DATE]: () => date,
  [DuckDBTypeId.TIMESTAMP]: () => timestamp,
  [DuckDBTypeId.TIMESTAMP_TZ]: () => timestamp,
  [DuckDBTypeId.TIMESTAMP_S]: () => timestamp,
  [DuckDBTypeId.TIMESTAMP_MS]: () => timestamp,
  [DuckDBTypeId.TIMESTAMP_NS]: () => timestamp,
  [DuckDBTypeId.VARCHAR]: () => text,
  [DuckDBTypeId.ENUM]: () => text,
  [DuckDBTypeId.BLOB]: () => blob,
  [DuckDBTypeId.LIST]: listOf,
  [DuckDBTypeId.ARRAY]: listOf,
  [DuckDBTypeId.STRUCT]: structOf,
  [DuckDBTypeId.MAP]: mapOf,
};

/** The converter for a column or nested type; TIME, INTERVAL, UUID, BIT... become their DuckDB text. */
export function converterFor(type: DuckDBType): Convert {
  return CONVERTERS[type.typeId]?.(type) ?? generic;
}

/** Turns result chunks into row objects keyed by column name. */
export class RowEncoder {
  private readonly converters: Convert[];
  private readonly safeNames: boolean;

  constructor(
    private readonly names: readonly string[],
    types: readonly DuckDBType[],
  ) {
    this.converters = types.map(converterFor);
    this.safeNames = !names.includes('__proto__');
  }

  /** Appends at most `max` rows of the chunk to `out`. */
  encode(chunk: DuckDBDataChunk, max: number, out: JsonRow[]): void {
    const count = Math.min(chunk.rowCount, max);
    if (count <= 0) return;
    const columns = this.converters.map((convert, index) => {
      const values = chunk.getColumnValues(index);
      const converted = new Array<JsonValue>(count);
      for (let row = 0; row < count; row++) converted[row] = convert(values[row] ?? null);
      return converted;
    });
    for (let row = 0; row < count; row++) out.push(this.row(columns, row));
  }

  /**
   * Hands the chunk's rows to `take` one at a time, until it answers false. Values are read row by
   * row, so rows past the point where `take` stops (a result grown too large) are never converted.
   */
  eachRow(chunk: DuckDBDataChunk, take: (row: JsonRow) => boolean): void {
    const vectors = this.converters.map((_convert, index) => chunk.getColumnVector(index));
    for (let index = 0; index < chunk.rowCount; index++) {
      const row: JsonRow = {};
      for (let column = 0; column < vectors.length; column++) {
        const name = this.names[column] ?? `column${column}`;
        const convert = this.converters[column];
        const value = convert === undefined ? null : convert(vectors[column]?.getItem(index) ?? null);
        if (this.safeNames) row[name] = value;
        else setKey(row, name, value);
      }
      if (!take(row)) return;
    }
  }

  private row(columns: readonly JsonValue[][], index: number): JsonRow {
    const row: JsonRow = {};
    for (let column = 0; column < columns.length; column++) {
      const name = this.names[column] ?? `column${column}`;
      const value = columns[column]?.[index] ?? null;
      if (this.safeNames) row[name] = value;
      else setKey(row, name, value);
    }
    return row;
  }
}
