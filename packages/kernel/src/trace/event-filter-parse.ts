// Event filters (Documentation/trace/events.rst, "Event filtering"): the
// boolean expressions written to tracefs's events/GROUP/EVENT/filter,
// parsed as kernel/trace/trace_events_filter.c parses them (calc_stack,
// predicate_parse, parse_pred) into a tree of typed predicates, each checked
// against the event's fields:
//
//   EXPR  := TERM (('&&' | '||') TERM)*        && binds tighter than ||
//   TERM  := '!'* ( '(' EXPR ')' | FIELD[.ustring][.function] OP VALUE )
//
// numbers take == != < <= > >= & (a value as kstrtoll/kstrtoull read it,
// cast to the field's type), strings == != and ~ (a glob in quotes),
// numbers and the CPU also == != & CPUS{cpulist}, and an unsigned long
// FIELD.function == != a kernel function (or address): the field lies in it.
// "0" alone means no filter (apply_event_filter clears it).
//
// Errors are FilterErrors with the text and position parse_error records:
// calc_stack's at the character, parse_pred's one past it (as Linux has them).
// Where Linux fails without a text (a term with no field name, an empty
// filter, a trailing && after a || at the outer level, which trips a WARN in
// predicate_parse), the error says what is wrong all the same. Positions are
// in UTF-16 units of the text, which are Linux's bytes for ASCII.

import type { Kallsyms } from '../kallsyms.js'
import { parseCpulist } from './event-filter-cpulist.js'
import { FilterError, type FilterErrorCode } from './event-filter-error.js'
import { type FilterField, findEventField } from './event-filter-fields.js'
import { parseGlobPattern, type StringMatch } from './event-filter-regex.js'
import { kallsymsSizeOffset } from './probe-definition.js'

/** The operators, in the order parse_pred tries them ('<=' before '<'). */
export const FILTER_OPS = ['~', '!=', '==', '<=', '<', '>=', '>', '&'] as const
export type FilterOp = (typeof FILTER_OPS)[number]

export type FilterPredicate =
  /** A number (or the CPU) against a value, cast to the field's type. */
  | { kind: 'number'; field: FilterField; op: Exclude<FilterOp, '~'>; value: bigint }
  /** A string or comm against a pattern (match.not: '!=' or a '~' pattern's leading '!'). */
  | { kind: 'string'; field: FilterField; op: '==' | '!=' | '~'; match: StringMatch }
  /** A number or the CPU against CPUS{...} of two CPUs or more (or none). */
  | { kind: 'cpus'; field: FilterField; op: '==' | '!=' | '&'; cpus: ReadonlySet<number>; nrCpus: number }
  /** FIELD.function: the field's address is (==) or is not (!=) in [start, end). */
  | { kind: 'function'; field: FilterField; op: '==' | '!='; start: bigint; end: bigint }

export type FilterExpr =
  | { kind: 'pred'; pred: FilterPredicate /** Where its text starts. */; at: number; text: string }
  | { kind: 'not'; expr: FilterExpr }
  | { kind: 'and' | 'or'; terms: FilterExpr[] }

export interface EventFilter {
  text: string
  /** null: no filter, every event matches. */
  expr: FilterExpr | null
}

export interface FilterParseOptions {
  /** For FIELD.function: the kernel's symbols (without them no function is found). */
  kallsyms?: Kallsyms
  /** The CPUs a cpulist may name (nr_cpumask_bits); default 16, the guest kernel's NR_CPUS. */
  nrCpus?: number
}

/** MAX_FILTER_STR_VAL: a string value's limit. */
const MAX_FILTER_STR_VAL = 256
/** num_buf: a number's text must fit in 23 characters. */
const NUM_BUF = 24
const NR_CPUS = 16
const U64_MAX = (1n << 64n) - 1n
const S64_MAX = (1n << 63n) - 1n

const isSpace = (c: string | undefined) => c !== undefined && ' \t\n\v\f\r'.includes(c)
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9'
const isAlnum = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9]$/.test(c)

/** kstrtoull(s, 0): all of s a number ('+' first allowed; 0x hex, 0 octal), below 2^64; or null. */
function kstrtoull(s: string): bigint | null {
  let i = s[0] === '+' ? 1 : 0
  let radix = 10
  if (s[i] === '0') {
    radix = (s[i + 1] === 'x' || s[i + 1] === 'X') && /^[0-9a-fA-F]$/.test(s[i + 2] ?? '') ? 16 : 8
    if (radix === 16) i += 2
  }
  const from = i
  let v = 0n
  for (; i < s.length; i++) {
    const d = Number.parseInt(s[i], 16)
    if (Number.isNaN(d) || d >= radix) break
    v = v * BigInt(radix) + BigInt(d)
  }
  if (i === from || i !== s.length || v > U64_MAX) return null
  return v
}

/** kstrtoll(s, 0): a signed 64-bit number ('-' first allowed); or null. */
function kstrtoll(s: string): bigint | null {
  if (s[0] === '-') {
    const v = s[1] === '+' ? null : kstrtoull(s.slice(1))
    return v === null || v > S64_MAX + 1n ? null : -v
  }
  const v = kstrtoull(s)
  return v === null || v > S64_MAX ? null : v
}

/** is_string_field. */
const isStringField = (f: FilterField) => f.filterType === 'string' || f.filterType === 'comm'

/** calc_stack: balanced quotes and parentheses, and how many terms (0: nothing to filter). */
function calcStack(str: string): number {
  let isPred = false
  let nrPreds = 0
  let open = 1
  let lastQuote = 0
  let quote = ''
  let i = 0
  for (; i < str.length; i++) {
    const c = str[i]
    if (isSpace(c)) continue
    if (quote) {
      if (c === quote) quote = ''
      continue
    }
    if (c === "'" || c === '"') {
      quote = c
      lastQuote = i
    } else if ((c === '|' || c === '&') && str[i + 1] === c) {
      isPred = false
      continue
    } else if (c === '(') {
      isPred = false
      open++
      continue
    } else if (c === ')') {
      isPred = false
      if (open === 1) throw new FilterError('TOO_MANY_CLOSE', i)
      open--
      continue
    }
    if (!isPred) {
      nrPreds++
      isPred = true
    }
  }
  if (quote) throw new FilterError('MISSING_QUOTE', lastQuote)
  if (open !== 1) {
    // The bad open: scanning back, the first '(' at the level the string ends at.
    let level = open
    for (i--; i > 0; i--) {
      const c = str[i]
      if (quote) {
        if (c === quote) quote = ''
        continue
      }
      if (c === '(') {
        if (level === open) throw new FilterError('TOO_MANY_OPEN', i)
        level--
      } else if (c === ')') level++
      else if (c === "'" || c === '"') quote = c
    }
    throw new FilterError('TOO_MANY_OPEN', 0)
  }
  return nrPreds
}

/** A group being read: its terms so far, as ORs of ANDs. */
interface Frame {
  /** A '!' before its '('. */
  negated: boolean
  /** The '!'s read since the last term (their parity). */
  not: boolean
  ors: FilterExpr[]
  ands: FilterExpr[]
}

const all = (kind: 'and' | 'or', terms: FilterExpr[]): FilterExpr =>
  terms.length === 1 ? terms[0] : { kind, terms }

function close(f: Frame): FilterExpr {
  const ors = f.ands.length > 0 ? [...f.ors, all('and', f.ands)] : f.ors
  const e = all('or', ors)
  return f.negated ? { kind: 'not', expr: e } : e
}

class FilterParser {
  constructor(
    readonly str: string,
    readonly fields: readonly FilterField[],
    readonly options: FilterParseOptions,
  ) {}

  fail(code: FilterErrorCode, at: number, detail?: string): never {
    throw new FilterError(code, Math.min(at, this.str.length), detail)
  }

  /** predicate_parse's first pass, building the tree instead of the program. */
  parse(): FilterExpr {
    const str = this.str
    const len = str.length
    const stack: Frame[] = [{ negated: false, not: false, ors: [], ands: [] }]
    let pos = 0
    let n = 0
    /** The last && or || when no term has followed it yet. */
    let dangling: { op: string; at: number } | null = null
    outer: while (pos < len) {
      const c = str[pos++]
      if (isSpace(c)) continue
      const top = stack[stack.length - 1]
      if (c === '(') {
        stack.push({ negated: top.not, not: false, ors: [], ands: [] })
        top.not = false
        continue
      }
      // "!=" and "!~" are not a "not".
      if (c === '!' && str[pos] !== '=' && str[pos] !== '~') {
        top.not = !top.not
        continue
      }
      const start = pos - 1
      const { pred, end } = this.parsePredicate(start)
      const term: FilterExpr = { kind: 'pred', pred, at: start, text: str.slice(start, end) }
      top.ands.push(top.not ? { kind: 'not', expr: term } : term)
      top.not = false
      dangling = null
      n++
      pos = end
      // After a term: only ')', '&&', '||' or the end.
      for (;;) {
        const at = pos++
        const next = str[at]
        if (isSpace(next)) continue
        if (next === undefined) break outer
        const f = stack[stack.length - 1]
        if ((next === '&' || next === '|') && str[pos] === next) {
          pos++
          if (next === '|') {
            f.ors.push(all('and', f.ands))
            f.ands = []
          }
          dangling = { op: next, at }
          continue outer
        }
        if (next !== ')') this.fail('TOO_MANY_PREDS', at)
        if (stack.length === 1) this.fail('TOO_MANY_CLOSE', pos)
        stack.pop()
        stack[stack.length - 1].ands.push(close(f))
      }
    }
    if (stack.length > 1) this.fail('TOO_MANY_OPEN', pos)
    if (n === 0) this.fail('NO_FILTER', pos)
    // Linux ignores a trailing operator, unless a trailing && leaves an outer || unresolved.
    if (dangling?.op === '&' && stack[0].ors.length > 0)
      this.fail('INVALID_FILTER', dangling.at, 'nothing follows the last &&')
    return close(stack[0])
  }

  /** parse_pred: FIELD OP VALUE at start; its errors are one past where it stopped. */
  parsePredicate(start: number): { pred: FilterPredicate; end: number } {
    const str = this.str
    const at = (j: number) => j + 1
    let i = start
    while (isAlnum(str[i]) || str[i] === '_') i++
    if (i === start) this.fail('MISSING_FIELD', start)
    const name = str.slice(start, i)
    const field = findEventField(this.fields, name)
    if (!field) this.fail('FIELD_NOT_FOUND', at(i), name)
    // A probe's strings are its own (__data_loc): .ustring changes nothing.
    if (str.startsWith('.ustring', i)) i += 8
    const fn = str.startsWith('.function', i)
    if (fn) i += 9
    while (isSpace(str[i])) i++
    const op = FILTER_OPS.find((o) => str.startsWith(o, i))
    if (op === undefined) return this.fail('INVALID_OP', at(i))
    i += op.length
    while (isSpace(str[i])) i++
    const s = i
    if (field.count)
      this.fail(
        'ILLEGAL_FIELD_OP',
        at(i),
        `${name} is an array of ${field.count}: a filter compares one value`,
      )

    if (fn) {
      if (field.size !== 8) this.fail('ILLEGAL_FIELD_OP', at(i), `${name} is not an unsigned long`)
      if (op !== '==' && op !== '!=') this.fail('INVALID_OP', at(i))
      const ks = this.options.kallsyms
      let ip: bigint
      if (isDigit(str[i])) {
        while (isAlnum(str[i])) i++
        if (i - s >= NUM_BUF) this.fail('OPERAND_TOO_LONG', at(i))
        const v = kstrtoull(str.slice(s, i))
        if (v === null) return this.fail('INVALID_VALUE', at(i))
        ip = v
      } else {
        while (i < str.length && !isSpace(str[i])) i++
        const a = ks?.lookupName(str.slice(s, i))
        if (a === undefined || a === 0) return this.fail('NO_FUNCTION', at(i), str.slice(s, i))
        ip = BigInt.asUintN(64, BigInt(a))
      }
      // kallsyms_lookup_size_offset: the function around ip.
      const loc = ks && kallsymsSizeOffset(ks, Number(BigInt.asIntN(64, ip)))
      if (!loc) return this.fail('NO_FUNCTION', at(i), str.slice(s, i))
      const first = ip - BigInt(loc.offset)
      return { pred: { kind: 'function', field, op, start: first, end: first + BigInt(loc.size) }, end: i }
    }

    if (str.startsWith('CPUS', i)) {
      if (isStringField(field) || (op !== '==' && op !== '!=' && op !== '&'))
        this.fail('ILLEGAL_FIELD_OP', at(i))
      i += 4
      if (str[i++] !== '{') this.fail('MISSING_BRACE_OPEN', at(i))
      const maskStart = i
      while (i < str.length && str[i] !== '}') i++
      if (str[i] !== '}') this.fail('MISSING_BRACE_CLOSE', at(i))
      if (maskStart === i) this.fail('INVALID_CPULIST', at(i))
      const nrCpus = this.options.nrCpus ?? NR_CPUS
      const cpus = parseCpulist(str.slice(maskStart, i), nrCpus)
      if (!cpus) return this.fail('INVALID_CPULIST', at(i))
      i++
      // One CPU is a plain comparison (& becomes ==).
      if (cpus.size === 1)
        return {
          pred: { kind: 'number', field, op: op === '&' ? '==' : op, value: BigInt([...cpus][0]) },
          end: i,
        }
      return { pred: { kind: 'cpus', field, op, cpus, nrCpus }, end: i }
    }

    if (str[i] === "'" || str[i] === '"') {
      const q = str[i]
      if (op !== '!=' && op !== '~' && op !== '==') return this.fail('ILLEGAL_FIELD_OP', at(i))
      if (!isStringField(field)) this.fail('EXPECT_DIGIT', at(i), `${name} is a number`)
      for (i++; i < str.length && str[i] !== q; i++);
      if (i >= str.length) this.fail('MISSING_QUOTE', at(i))
      const pattern = str.slice(s + 1, i)
      if (pattern.length >= MAX_FILTER_STR_VAL) this.fail('OPERAND_TOO_LONG', at(i))
      const match =
        op === '~' ? parseGlobPattern(pattern) : { type: 'full' as const, pattern, not: op === '!=' }
      return { pred: { kind: 'string', field, op, match }, end: i + 1 }
    }

    if (isDigit(str[i]) || str[i] === '-') {
      if (isStringField(field)) this.fail('EXPECT_STRING', at(i), `${name} is a string`)
      if (op === '~') return this.fail('ILLEGAL_FIELD_OP', at(i))
      if (str[i] === '-') i++
      while (isAlnum(str[i])) i++
      if (i - s >= NUM_BUF) this.fail('OPERAND_TOO_LONG', at(i))
      const value = field.signed ? kstrtoll(str.slice(s, i)) : kstrtoull(str.slice(s, i))
      if (value === null) return this.fail('ILLEGAL_INTVAL', at(s), str.slice(s, i))
      return { pred: { kind: 'number', field, op, value }, end: i }
    }
    return this.fail('INVALID_VALUE', at(i))
  }
}

/**
 * Parse a filter for an event with these fields of its own (probeEventFields);
 * the generic and common fields come with every event. Throws FilterError.
 */
export function parseEventFilter(
  text: string,
  fields: readonly FilterField[],
  options: FilterParseOptions = {},
): EventFilter {
  if (text.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, '') === '0') return { text, expr: null }
  if (calcStack(text) === 0) throw new FilterError('NO_FILTER', text.length)
  return { text, expr: new FilterParser(text, fields, options).parse() }
}
