// A probe hit's field values for its event's filter: what trace_kprobe.c
// and trace_uprobe.c store in the event's record (where it hit, then each
// fetch argument as its type stores it, a bitfield already cut out), and the
// common and generic fields (the task's pid and comm, the CPU). Each value
// is fetched when a predicate first asks for it, with the fetches that print
// the hit, so a filter sees what the trace line shows.

import type { FieldValue, FilterRecord } from './event-filter.js'
import type { FilterField } from './event-filter-fields.js'
import { type FetchContext, fetchArg } from './fetch.js'
import type { FetchType, ProbeArg } from './probe-definition.js'

/** What a probe handler knows of the hit. */
export interface ProbeHitFields {
  ctx: FetchContext
  args: readonly ProbeArg[]
  comm: string
  pid: number
  cpu: number
  /** The probed address (__probe_ip), or a return probe's function (__probe_func). */
  address: number
  /** A return probe's return address (__probe_ret_ip). */
  returnAddress?: number
  /** The event's id (common_type). */
  eventType?: number
}

/**
 * common_flags as the trace line's "d...." has them: TRACE_FLAG_IRQS_OFF
 * (probe handlers run with interrupts off), and a preempt count of 0.
 */
export const PROBE_HIT_FLAGS = 0x01
export const PROBE_HIT_PREEMPT_COUNT = 0

const STRING_TYPES = new Set<FetchType>(['string', 'ustring', 'symstr'])

const ulong = (n: number) => BigInt.asUintN(64, BigInt(n))

/** One argument's stored value: a string, or the bits its type stores (fetched as xN, so exactly). */
function argValue(ctx: FetchContext, arg: ProbeArg): FieldValue {
  if (arg.count) return null
  const prefix = arg.name.length + 1
  if (STRING_TYPES.has(arg.type)) {
    const text = fetchArg(ctx, arg).slice(prefix)
    return text === '(fault)' ? null : text.slice(1, -1)
  }
  const bits = arg.type === 'char' ? 8 : arg.type === 'symbol' ? 64 : Number(arg.type.slice(1))
  const text = fetchArg(ctx, { ...arg, type: `x${bits}` as FetchType }).slice(prefix)
  return text === '(fault)' ? null : BigInt(text)
}

/** The hit's record, each field looked up as trace_find_event_field finds it (arguments first). */
export function probeHitRecord(hit: ProbeHitFields): FilterRecord {
  const cache = new Map<string, FieldValue>()
  const byName = new Map(hit.args.map((a) => [a.name, a]))
  const lookup = (field: FilterField): FieldValue => {
    if (field.filterType === 'cpu') return BigInt(hit.cpu)
    if (field.filterType === 'comm') return hit.comm
    const arg = byName.get(field.name)
    if (arg) return argValue(hit.ctx, arg)
    switch (field.name) {
      case '__probe_ip':
      case '__probe_func':
        return ulong(hit.address)
      case '__probe_ret_ip':
        return hit.returnAddress === undefined ? null : ulong(hit.returnAddress)
      case 'common_pid':
        return BigInt(hit.pid)
      case 'common_type':
        return BigInt(hit.eventType ?? 0)
      case 'common_flags':
        return BigInt(PROBE_HIT_FLAGS)
      case 'common_preempt_count':
        return BigInt(PROBE_HIT_PREEMPT_COUNT)
      default:
        return null
    }
  }
  return (field) => {
    if (!cache.has(field.name)) cache.set(field.name, lookup(field))
    return cache.get(field.name) ?? null
  }
}
