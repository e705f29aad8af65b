// One probe hit, as probekit run -p prints it: the ftrace line (traceLine's
// format, the default) or, with --json, one JSON object per hit. The JSON
// values are the same fetches the ftrace line prints (fetchArg), typed:
//
//   u8..u64, s8..s64 (and bitfields)  a number when the value is exactly a
//                                     double, else its decimal text
//   x8..x64, symbol                   the text ftrace prints ("0x1f",
//                                     "do_sys_open+0x0/0x28")
//   char                              a one-character string
//   string, ustring, symstr, $comm,
//   \"STR"                            the string, without ftrace's quotes
//   TYPE[N]                           an array of those
//
// A fetch that faults (ftrace's "(fault)") is null, and its name (NAME[i]
// for an array's element) is listed in "faults". A hit is written at all
// only when its event's filter (-f) matches it (hitPasses).

import {
  eventFilterMatches,
  type FetchContext,
  fetchArg,
  type ProbeArg,
  probeHitRecord,
  traceLine,
} from '@probekit/kernel'
import type { ArmedFilter } from './event-filters.js'

/** What a probe handler saw: enough for the ftrace line and the JSON object. */
export interface Hit {
  comm: string
  pid: number
  cpu: number
  nanoseconds: number
  group: string
  event: string
  probe: 'p' | 'r'
  /** The probed address: the instruction (p) or the function's entry (r). */
  address: number
  /** A kernel probe's address as %pS prints it (sym+0xoff/0xsize). */
  symbol?: string
  /** A return probe's return address. */
  returnAddress?: number
  /** What ftrace prints between the parentheses. */
  where: string
  ctx: FetchContext
  args: readonly ProbeArg[]
}

export type JsonValue = number | string | null | JsonValue[]

const hex = (n: number) => `0x${BigInt.asUintN(64, BigInt(n)).toString(16)}`

/** A decimal integer as a number when a double holds it exactly, else as its text. */
function decimal(text: string): number | string {
  const n = Number(text)
  return /^-?\d+$/.test(text) && Number.isFinite(n) && BigInt(n) === BigInt(text) ? n : text
}

/** One scalar's ftrace text as its JSON value. */
function scalar(arg: ProbeArg, text: string): JsonValue {
  if (text === '(fault)') return null
  const t = arg.type
  if (t === 'char') return text.slice(1, -1)
  if (t[0] === 'u' || t[0] === 's') return decimal(text)
  return text
}

/** An array of scalars' ftrace text, {a,b,...}: each element (a char is always 'c', three characters). */
function splitElements(text: string): string[] {
  const out: string[] = []
  let i = 1
  const end = text.length - 1
  while (i < end) {
    let j: number
    if (text[i] === "'") j = i + 3
    else {
      j = text.indexOf(',', i)
      if (j < 0 || j > end) j = end
    }
    out.push(text.slice(i, j))
    i = j + 1
  }
  return out
}

const STRING_TYPES = new Set(['string', 'ustring', 'symstr'])
const MEMORY_FETCHES = new Set(['mem', 'symbol', 'deref', 'fileoffset'])

/** The same fetch, its last load moved by delta bytes (the address of element i). */
function shifted(f: ProbeArg['fetch'], delta: number): ProbeArg['fetch'] {
  switch (f.kind) {
    case 'mem':
      return { ...f, address: f.address + BigInt(delta) }
    case 'symbol':
    case 'deref':
    case 'fileoffset':
      return { ...f, offset: f.offset + delta }
    default:
      return f
  }
}

/** One argument's JSON value; the names of what faulted go to faults. */
export function argValue(ctx: FetchContext, arg: ProbeArg, faults: string[]): JsonValue {
  const text = fetchArg(ctx, arg).slice(arg.name.length + 1)
  const count = arg.count ?? 0
  const stringy = STRING_TYPES.has(arg.type) || arg.fetch.kind === 'comm' || arg.fetch.kind === 'immstr'
  if (count > 0 && text.startsWith('{')) {
    let values: JsonValue[]
    if (stringy) {
      // Each element is a string through the I-th pointer: fetched alone, so quotes and commas
      // inside one cannot be mistaken for the array's.
      const memory = MEMORY_FETCHES.has(arg.fetch.kind)
      values = Array.from({ length: count }, (_, i) => {
        if (!memory && i > 0) return null
        const one: ProbeArg = memory
          ? {
              ...arg,
              count: undefined,
              fetch: { kind: 'deref', offset: 0, user: false, inner: shifted(arg.fetch, 8 * i) },
            }
          : { ...arg, count: undefined }
        const t = fetchArg(ctx, one).slice(arg.name.length + 1)
        return t === '(fault)' ? null : t.slice(1, -1)
      })
    } else values = splitElements(text).map((e) => scalar(arg, e))
    values.forEach((v, i) => {
      if (v === null) faults.push(`${arg.name}[${i}]`)
    })
    return values
  }
  if (text === '(fault)') {
    faults.push(arg.name)
    return null
  }
  return stringy ? text.slice(1, -1) : scalar(arg, text)
}

/** The hit as an ftrace line. */
export function hitLine(hit: Hit): string {
  return traceLine({
    comm: hit.comm,
    pid: hit.pid,
    cpu: hit.cpu,
    nanoseconds: hit.nanoseconds,
    event: hit.event,
    where: hit.where,
    args: hit.args.map((a) => fetchArg(hit.ctx, a)),
  })
}

/** The hit as one JSON object (one line). */
export function hitJson(hit: Hit): string {
  const faults: string[] = []
  const args: Record<string, JsonValue> = {}
  for (const a of hit.args) args[a.name] = argValue(hit.ctx, a, faults)
  return JSON.stringify({
    type: 'hit',
    timestamp_ns: hit.nanoseconds,
    cpu: hit.cpu,
    pid: hit.pid,
    comm: hit.comm,
    group: hit.group,
    event: hit.event,
    probe: hit.probe,
    address: hex(hit.address),
    ...(hit.symbol !== undefined ? { symbol: hit.symbol } : {}),
    ...(hit.returnAddress !== undefined ? { return_address: hex(hit.returnAddress) } : {}),
    where: hit.where,
    args,
    ...(faults.length > 0 ? { faults } : {}),
  })
}

/** How hits are written: ftrace lines (the default) or JSON objects. */
export type HitFormat = 'ftrace' | 'json'

export function formatHit(hit: Hit, format: HitFormat): string {
  return format === 'json' ? hitJson(hit) : hitLine(hit)
}

/** Is the hit written: its event has no filter (-f), or the filter matches the hit's fields? */
export function hitPasses(armed: ArmedFilter | undefined, hit: Hit): boolean {
  return (
    armed === undefined ||
    eventFilterMatches(armed.filter, probeHitRecord({ ...hit, eventType: armed.eventType }))
  )
}
