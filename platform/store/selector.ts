import { StoreError } from './types.js';

/**
 * Kubernetes label selectors in their string form (`a=b,c!=d,e in (x,y),f notin (z),g,!h,n>3`), parsed
 * the way k8s.io/apimachinery/pkg/labels does: same tokens, same context rule (`in`/`notin` are operators
 * only right after a key), same validation of keys and values, same matching semantics.
 */
export type SelectorOperator =
  'In' | 'NotIn' | 'Equals' | 'NotEquals' | 'Exists' | 'DoesNotExist' | 'GreaterThan' | 'LessThan';

export interface Requirement {
  readonly key: string;
  readonly operator: SelectorOperator;
  /** In/NotIn: the set (never empty; may contain ''); Equals/NotEquals/GreaterThan/LessThan: one value. */
  readonly values: readonly string[];
}

/** All requirements must match (AND); no requirements match everything. */
export interface Selector {
  readonly requirements: readonly Requirement[];
}

export type Labels = Readonly<Record<string, string>>;

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const INTEGER = /^[+-]?[0-9]+$/;

/** Why `key` is not a valid label key (`[prefix/]name`), or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `label key "${key}": prefix must be a lowercase DNS subdomain of at most 253 characters`;
  }
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name)) {
    return `label key "${key}": name must be 1-63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character`;
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    return `label value "${value}": must be at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character`;
  }
  return undefined;
}

type TokenKind = 'id' | '!' | '=' | '==' | '!=' | '>' | '<' | '(' | ')' | ',' | 'in' | 'notin' | 'end';
interface Token {
  readonly kind: TokenKind;
  readonly text: string;
}

const SYMBOLS = new Map<string, TokenKind>(
  (['=', '!', '(', ')', ',', '>', '<', '==', '!='] as const).map((symbol) => [symbol, symbol]),
);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);
const isSpecial = (ch: string): boolean => ch.length === 1 && SYMBOLS.has(ch);

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (pos < source.length) {
    const ch = source.charAt(pos);
    if (WHITESPACE.has(ch)) {
      pos += 1;
    } else if (isSpecial(ch)) {
      const pair = source.slice(pos, pos + 2);
      const text = SYMBOLS.has(pair) ? pair : ch;
      tokens.push({ kind: SYMBOLS.get(text) ?? 'end', text });
      pos += text.length;
    } else {
      let end = pos;
      while (end < source.length && !isSpecial(source.charAt(end)) && !WHITESPACE.has(source.charAt(end)))
        end += 1;
      const text = source.slice(pos, end);
      tokens.push({ kind: text === 'in' || text === 'notin' ? text : 'id', text });
      pos = end;
    }
  }
  tokens.push({ kind: 'end', text: 'end of string' });
  return tokens;
}

const BINARY_OPERATORS: Partial<Record<TokenKind, SelectorOperator>> = {
  in: 'In',
  notin: 'NotIn',
  '=': 'Equals',
  '==': 'Equals',
  '!=': 'NotEquals',
  '>': 'GreaterThan',
  '<': 'LessThan',
};

class Parser {
  private position = 0;

  constructor(private readonly tokens: readonly Token[]) {}

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    if (this.peekAsValue().kind === 'end') return requirements;
    for (;;) {
      const next = this.peekAsValue();
      if (next.kind !== 'id' && next.kind !== '!') {
        throw new Error(`found '${next.text}', expected: !, identifier, or 'end of string'`);
      }
      requirements.push(this.parseRequirement());
      const separator = this.consumeAsValue();
      if (separator.kind === 'end') return requirements;
      if (separator.kind !== ',')
        throw new Error(`found '${separator.text}', expected: ',' or 'end of string'`);
    }
  }

  private parseRequirement(): Requirement {
    let token = this.consumeAsValue();
    const negated = token.kind === '!';
    if (negated) token = this.consumeAsValue();
    if (token.kind !== 'id') throw new Error(`found '${token.text}', expected: identifier`);
    const key = token.text;
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) throw new Error(keyProblem);
    const after = this.peekAsValue().kind;
    if (after === 'end' || after === ',') {
      return { key, operator: negated ? 'DoesNotExist' : 'Exists', values: [] };
    }
    if (negated)
      throw new Error(`found '${this.peekAsValue().text}', expected: ',' or 'end of string' after !${key}`);
    const operatorToken = this.consume();
    const operator = BINARY_OPERATORS[operatorToken.kind];
    if (operator === undefined) {
      throw new Error(`found '${operatorToken.text}', expected: in, notin, =, ==, !=, >, <`);
    }
    const values = operator === 'In' || operator === 'NotIn' ? this.parseSet() : [this.parseExactValue()];
    return checkValues({ key, operator, values });
  }

  private parseSet(): string[] {
    const open = this.consumeAsValue();
    if (open.kind !== '(') throw new Error(`found '${open.text}', expected: '('`);
    const values = new Set<string>();
    let expectValue = true;
    for (;;) {
      const token = this.consumeAsValue();
      if (token.kind === ')') {
        if (expectValue) values.add('');
        return [...values];
      }
      if (token.kind === ',') {
        if (expectValue) values.add('');
        expectValue = true;
      } else if (token.kind === 'id' && expectValue) {
        values.add(token.text);
        expectValue = false;
      } else {
        throw new Error(`found '${token.text}', expected: ',', ')' or identifier`);
      }
    }
  }

  private parseExactValue(): string {
    const next = this.peekAsValue();
    if (next.kind === 'end' || next.kind === ',') return '';
    const token = this.consumeAsValue();
    if (token.kind !== 'id') throw new Error(`found '${token.text}', expected: identifier`);
    return token.text;
  }

  /** Where a key or a value may stand, `in` and `notin` are plain words. */
  private peekAsValue(): Token {
    return asValue(this.tokens[this.position]);
  }

  private consumeAsValue(): Token {
    return asValue(this.consume());
  }

  private consume(): Token {
    const token = this.tokens[this.position];
    if (token === undefined) throw new Error('unexpected end of string');
    if (token.kind !== 'end') this.position += 1;
    return token;
  }
}

function asValue(token: Token | undefined): Token {
  if (token === undefined) return { kind: 'end', text: 'end of string' };
  return token.kind === 'in' || token.kind === 'notin' ? { kind: 'id', text: token.text } : token;
}

function checkValues(requirement: Requirement): Requirement {
  for (const value of requirement.values) {
    const problem = labelValueProblem(value);
    if (problem !== undefined) throw new Error(problem);
  }
  const { operator } = requirement;
  const [value] = requirement.values;
  if (
    (operator === 'GreaterThan' || operator === 'LessThan') &&
    (value === undefined || !INTEGER.test(value))
  ) {
    throw new Error(`for '>' and '<' the value must be an integer, got "${value ?? ''}"`);
  }
  return requirement;
}

/** Parses a label selector string; an empty or blank string selects everything. Throws StoreError Invalid. */
export function parseLabelSelector(source: string): Selector {
  try {
    return { requirements: new Parser(tokenize(source)).parse() };
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw new StoreError('Invalid', `invalid label selector "${source}": ${detail}`, { cause: err });
  }
}

function matchesRequirement(requirement: Requirement, labels: Labels): boolean {
  const present = Object.hasOwn(labels, requirement.key);
  const value = present ? labels[requirement.key] : undefined;
  switch (requirement.operator) {
    case 'In':
    case 'Equals':
      return value !== undefined && requirement.values.includes(value);
    case 'NotIn':
    case 'NotEquals':
      return value === undefined || !requirement.values.includes(value);
    case 'Exists':
      return present;
    case 'DoesNotExist':
      return !present;
    case 'GreaterThan':
    case 'LessThan':
      return compareInteger(requirement, value);
  }
}

function compareInteger(requirement: Requirement, value: string | undefined): boolean {
  const [bound] = requirement.values;
  if (value === undefined || bound === undefined || !INTEGER.test(value)) return false;
  const actual = BigInt(value);
  const limit = BigInt(bound);
  return requirement.operator === 'GreaterThan' ? actual > limit : actual < limit;
}

/** Whether an object with these labels (undefined = none) is selected. */
export function matchesSelector(selector: Selector, labels: Labels | undefined): boolean {
  const actual = labels ?? {};
  return selector.requirements.every((requirement) => matchesRequirement(requirement, actual));
}
