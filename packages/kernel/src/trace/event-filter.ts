// Evaluating an event filter against one event's field values
// (filter_match_preds and the filter_pred_* functions of
// kernel/trace/trace_events_filter.c): an event is written to the trace
// only when its filter matches.
//
// A number is compared as its field's C type: the field's value and the
// filter's are both cast to it (an s8 field == 255 is == -1; a u8 == 256 is
// == 0), then <, <=, >, >= are signed or unsigned as the field is, and &
// is true when any bit is common. The CPU is compared as an int (and, as in
// Linux, cpu & N is never true: only CPUS{...} tests its bits). A field
// whose fetch faulted matches no predicate (events.rst: a string that cannot
// be read "will be treated as not matching").

import type { FilterField } from './event-filter-fields.js'
import type { EventFilter, FilterExpr, FilterPredicate } from './event-filter-parse.js'
import { stringMatches } from './event-filter-regex.js'

/** A field's value: a number, a string, or null when its fetch faulted. */
export type FieldValue = bigint | string | null

/** The event's field values, looked up as a predicate needs them. */
export type FilterRecord = (field: FilterField) => FieldValue

/** The value as the field's C type (its size, its sign). */
function asFieldType(field: FilterField, v: bigint): bigint {
  const bits = field.size * 8
  return field.signed ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v)
}

function compare(op: FilterPredicate['op'], a: bigint, b: bigint): boolean {
  switch (op) {
    case '==':
      return a === b
    case '!=':
      return a !== b
    case '<':
      return a < b
    case '<=':
      return a <= b
    case '>':
      return a > b
    case '>=':
      return a >= b
    default:
      return false
  }
}

/** One predicate against the event (filter_pred_fn_call). */
export function predicateMatches(p: FilterPredicate, record: FilterRecord): boolean {
  const v = record(p.field)
  if (v === null) return false
  if (p.kind === 'string') return typeof v === 'string' && stringMatches(p.match, v) !== p.match.not
  if (typeof v !== 'bigint') return false
  const cpu = p.field.filterType === 'cpu'
  switch (p.kind) {
    case 'number': {
      // filter_pred_cpu: an int compared as one; & is not among its cases.
      if (cpu) return compare(p.op, BigInt.asIntN(32, v), BigInt.asIntN(32, p.value))
      const a = asFieldType(p.field, v)
      const b = asFieldType(p.field, p.value)
      if (p.op === '&') return (BigInt.asUintN(64, a) & BigInt.asUintN(64, b)) !== 0n
      return compare(p.op, a, b)
    }
    case 'cpus': {
      // A number field's value is a CPU only below nr_cpu_ids (filter_pred_N_cpumask).
      const n = cpu ? v : BigInt.asUintN(p.field.size * 8, v)
      if (!cpu && n >= BigInt(p.nrCpus)) return false
      // A scalar never equals two CPUs or more (do_filter_scalar_cpumask).
      if (p.op === '==') return false
      if (p.op === '!=') return true
      return p.cpus.has(Number(n))
    }
    case 'function': {
      const a = BigInt.asUintN(64, v)
      const inside = a >= p.start && a < p.end
      return p.op === '==' ? inside : !inside
    }
  }
}

function evaluate(e: FilterExpr, record: FilterRecord): boolean {
  switch (e.kind) {
    case 'pred':
      return predicateMatches(e.pred, record)
    case 'not':
      return !evaluate(e.expr, record)
    case 'and':
      return e.terms.every((t) => evaluate(t, record))
    case 'or':
      return e.terms.some((t) => evaluate(t, record))
  }
}

/** filter_match_preds: does the event pass (no filter: every event does)? */
export function eventFilterMatches(filter: EventFilter, record: FilterRecord): boolean {
  return filter.expr === null || evaluate(filter.expr, record)
}
