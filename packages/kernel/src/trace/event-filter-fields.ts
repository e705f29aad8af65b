// The fields an event filter can name, as a probe event's format file lists
// them: the event's own (trace_kprobe.c's and trace_uprobe.c's
// __probe_ip, or __probe_func and __probe_ret_ip for a return probe, then
// one per fetch argument, typed as trace_probe.c stores it), then the generic
// fields every event has for filters (trace_events.c's
// trace_define_generic_fields: CPU, cpu, common_cpu, COMM, comm) and the
// common ones of struct trace_entry (common_type, common_flags,
// common_preempt_count, common_pid). trace_find_event_field looks them up in
// that order, so an argument named cpu or comm hides the generic one.

import type { ProbeArg, ProbeDefinition } from './probe-definition.js'

/**
 * What filter_assign_type makes of a field's type: a number (FILTER_OTHER),
 * a string (a probe's __data_loc char[] strings), the task's comm
 * (FILTER_COMM) or the current CPU (FILTER_CPU).
 */
export type FilterFieldType = 'other' | 'string' | 'comm' | 'cpu'

export interface FilterField {
  name: string
  filterType: FilterFieldType
  /** Bytes in the record (a number's 1, 2, 4 or 8; a __data_loc 4; a generic field 0). */
  size: number
  signed: boolean
  /** TYPE[N]: an array of N elements. */
  count?: number
}

/** The generic fields (no storage: the filter reads the current CPU and task). */
export const GENERIC_FIELDS: readonly FilterField[] = [
  { name: 'CPU', filterType: 'cpu', size: 0, signed: true },
  { name: 'cpu', filterType: 'cpu', size: 0, signed: true },
  { name: 'common_cpu', filterType: 'cpu', size: 0, signed: true },
  { name: 'COMM', filterType: 'comm', size: 0, signed: false },
  { name: 'comm', filterType: 'comm', size: 0, signed: false },
]

/** struct trace_entry's fields, common_ before each. */
export const COMMON_FIELDS: readonly FilterField[] = [
  { name: 'common_type', filterType: 'other', size: 2, signed: false },
  { name: 'common_flags', filterType: 'other', size: 1, signed: false },
  { name: 'common_preempt_count', filterType: 'other', size: 1, signed: false },
  { name: 'common_pid', filterType: 'other', size: 4, signed: true },
]

const STRING_TYPES = new Set(['string', 'ustring', 'symstr'])

/** One fetch argument's field: its stored type (a bitfield's is its container, unsigned). */
function argField(a: ProbeArg): FilterField {
  const t = a.type
  const out: FilterField = STRING_TYPES.has(t)
    ? { name: a.name, filterType: 'string', size: 4, signed: false }
    : {
        name: a.name,
        filterType: 'other',
        // char is u8, symbol an unsigned long (trace_probe.c's aliases).
        size: t === 'char' ? 1 : t === 'symbol' ? 8 : Number(t.slice(1)) / 8,
        signed: t[0] === 's' && t !== 'symbol' && t !== 'symstr',
      }
  if (a.count) out.count = a.count
  return out
}

/** A probe event's own fields: where it hit, then its fetch arguments. */
export function probeEventFields(def: Pick<ProbeDefinition, 'kind' | 'args'>): FilterField[] {
  const ulong = (name: string): FilterField => ({ name, filterType: 'other', size: 8, signed: false })
  const where = def.kind === 'r' ? [ulong('__probe_func'), ulong('__probe_ret_ip')] : [ulong('__probe_ip')]
  return [...where, ...def.args.map(argField)]
}

/** trace_find_event_field: the event's own fields first, then the generic, then the common. */
export function findEventField(own: readonly FilterField[], name: string): FilterField | undefined {
  return (
    own.find((f) => f.name === name) ??
    GENERIC_FIELDS.find((f) => f.name === name) ??
    COMMON_FIELDS.find((f) => f.name === name)
  )
}
