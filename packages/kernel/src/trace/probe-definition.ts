// Dynamic probe definitions in the syntax of tracefs kprobe_events
// (Documentation/trace/kprobetrace.rst), parsed into a definition the probe
// layers arm, and printed back in the kernel's normalised form:
//
//   p[:[GRP/]EVENT] [MOD:]SYM[+OFFS]|MEMADDR [FETCHARGS]
//   r[MAXACTIVE][:[GRP/]EVENT] [MOD:]SYM[+0] [FETCHARGS]
//   -:[GRP/]EVENT
//
// FETCHARGS are [NAME=]FETCHARG[:TYPE], with FETCHARG one of %REG, @ADDR,
// @SYM[+|-OFFS], $stackN, $stack, $retval, $comm, \IMM, +|-[u]OFFS(FETCHARG).
//
// User-space probes in the syntax of uprobe_events
// (Documentation/trace/uprobetracer.rst), told apart as tracefs does by a
// '/' in the probe point (PATH must be absolute or relative: ./prog):
//
//   p[:[GRP/]EVENT] PATH:OFFSET[%return] [FETCHARGS]
//   r[:[GRP/]EVENT] PATH:OFFSET [FETCHARGS]
//
// OFFSET is a file offset (as kstrtoul reads it: 0x hex, 0 octal, decimal).
// Beyond tracefs, PATH:SYMBOL[+OFFS] names the place as perf probe -x does;
// whoever arms the probe resolves it through the file's symbol table. Their
// FETCHARGS read user memory only: @SYM is refused, @+FILE_OFFSET (memory at
// that offset of the probed file, where the process has it mapped) is theirs,
// and the u of +u0(...) changes nothing.

export type FetchArg =
  | { kind: 'reg'; reg: string }
  | { kind: 'mem'; address: bigint }
  | { kind: 'symbol'; symbol: string; offset: number }
  | { kind: 'stack'; index: number }
  | { kind: 'stackpointer' }
  | { kind: 'retval' }
  | { kind: 'comm' }
  | { kind: 'imm'; value: bigint }
  | { kind: 'deref'; offset: number; user: boolean; inner: FetchArg }
  /** Uprobes' @+FILE_OFFSET: memory at that offset of the probed file, where the hitting process maps it. */
  | { kind: 'fileoffset'; offset: number }

export type FetchType =
  | 'u8'
  | 'u16'
  | 'u32'
  | 'u64'
  | 's8'
  | 's16'
  | 's32'
  | 's64'
  | 'x8'
  | 'x16'
  | 'x32'
  | 'x64'
  | 'string'

export interface ProbeArg {
  name: string
  fetch: FetchArg
  type: FetchType
}

/** A kernel probe point: a symbol with offset, or an absolute address. */
export type KprobeTarget = { symbol: string; offset: number; module?: string } | { address: bigint }

/**
 * A user probe point: a file offset in the file at path, or a symbol of that
 * file (its .symtab, else .dynsym) plus offset bytes.
 */
export type UprobeTarget = { path: string; offset: number } | { path: string; symbol: string; offset: number }

export interface ProbeDefinition<Target extends KprobeTarget | UprobeTarget = KprobeTarget | UprobeTarget> {
  kind: 'p' | 'r'
  group: string
  event: string
  /** Probe point: kernel (symbol or address) or user (path with a file offset or a symbol). */
  target: Target
  /** Kernel return probes: instances to preallocate (0 = the default; always 0 for uprobes). */
  maxactive: number
  args: ProbeArg[]
}

export type KprobeDefinition = ProbeDefinition<KprobeTarget>
export type UprobeDefinition = ProbeDefinition<UprobeTarget>

/** Is this a uprobe_events definition (a probe point in a file)? */
export function isUprobeDefinition(d: ProbeDefinition): d is UprobeDefinition {
  return 'path' in d.target
}

export interface ProbeDeletion {
  kind: '-'
  group: string
  event: string
}

export class ProbeSyntaxError extends Error {
  constructor(
    message: string,
    /** Offset in the definition where the problem is. */
    readonly position: number,
  ) {
    super(message)
    this.name = 'ProbeSyntaxError'
  }
}

/** x86-64 register names as pt_regs spells them (kprobetrace accepts these, without the leading 'r'). */
export const FETCH_REGISTERS = [
  'ax',
  'bx',
  'cx',
  'dx',
  'si',
  'di',
  'bp',
  'sp',
  'ip',
  'flags',
  'cs',
  'ss',
  'r8',
  'r9',
  'r10',
  'r11',
  'r12',
  'r13',
  'r14',
  'r15',
  'orig_ax',
] as const

const TYPES: readonly FetchType[] = [
  'u8',
  'u16',
  'u32',
  'u64',
  's8',
  's16',
  's32',
  's64',
  'x8',
  'x16',
  'x32',
  'x64',
  'string',
]
const MAX_ARGS = 128
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

function parseNumber(text: string, at: number, what: string): bigint {
  if (!/^-?(0x[0-9a-fA-F]+|[0-9]+)$/.test(text)) throw new ProbeSyntaxError(`bad ${what} '${text}'`, at)
  const neg = text.startsWith('-')
  const v = BigInt(neg ? text.slice(1) : text)
  return neg ? -v : v
}

function parseFetch(text: string, at: number, kind: 'p' | 'r', user = false): FetchArg {
  if (text.startsWith('%')) {
    const reg = text.slice(1)
    if (!(FETCH_REGISTERS as readonly string[]).includes(reg))
      throw new ProbeSyntaxError(`unknown register '%${reg}'`, at)
    return { kind: 'reg', reg }
  }
  if (text.startsWith('@')) {
    const body = text.slice(1)
    if (/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(body)) return { kind: 'mem', address: BigInt(body) }
    if (user) {
      const f = /^\+(0x[0-9a-fA-F]+|[0-9]+)$/.exec(body)
      if (f) return { kind: 'fileoffset', offset: safeOffset(BigInt(f[1]), at + 2) }
      if (body.startsWith('+')) throw new ProbeSyntaxError(`bad file offset '${text}'`, at)
      throw new ProbeSyntaxError(
        `'${text}': a uprobe cannot read a kernel symbol (use @ADDR, or @+FILE_OFFSET for memory of the probed file)`,
        at,
      )
    }
    const m = /^([A-Za-z_.][A-Za-z0-9_.]*)([+-](?:0x[0-9a-fA-F]+|[0-9]+))?$/.exec(body)
    if (!m) throw new ProbeSyntaxError(`bad memory reference '${text}'`, at)
    return {
      kind: 'symbol',
      symbol: m[1],
      offset: m[2] ? Number(parseNumber(m[2].replace(/^\+/, ''), at, 'offset')) : 0,
    }
  }
  if (text.startsWith('$')) {
    const v = text.slice(1)
    if (v === 'stack') return { kind: 'stackpointer' }
    if (v === 'comm') return { kind: 'comm' }
    if (v === 'retval') {
      if (kind !== 'r') throw new ProbeSyntaxError('$retval is only valid on a return probe', at)
      return { kind: 'retval' }
    }
    const s = /^stack([0-9]+)$/.exec(v)
    if (s) return { kind: 'stack', index: Number(s[1]) }
    throw new ProbeSyntaxError(`unknown variable '${text}'`, at)
  }
  if (text.startsWith('\\')) return { kind: 'imm', value: parseNumber(text.slice(1), at + 1, 'immediate') }
  const d = /^([+-])(u?)((?:0x[0-9a-fA-F]+|[0-9]+))\((.*)\)$/.exec(text)
  if (d) {
    const offset = Number(parseNumber(d[3], at + 1, 'offset')) * (d[1] === '-' ? -1 : 1)
    const innerAt = at + d[1].length + d[2].length + d[3].length + 1
    return { kind: 'deref', offset, user: d[2] === 'u', inner: parseFetch(d[4], innerAt, kind, user) }
  }
  throw new ProbeSyntaxError(`bad fetch argument '${text}'`, at)
}

/** A file offset must be exact as a JavaScript number. */
function safeOffset(v: bigint, at: number): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER))
    throw new ProbeSyntaxError(`offset 0x${v.toString(16)} is too large`, at)
  return Number(v)
}

/** An unsigned number as kstrtoul(s, 0) reads it: 0x hex, 0 octal, else decimal; or null. */
function kstrtoul(text: string): bigint | null {
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) return BigInt(text.toLowerCase())
  if (/^0[0-7]*$/.test(text)) return BigInt(`0o${text.slice(1) || '0'}`)
  if (/^[1-9][0-9]*$/.test(text)) return BigInt(text)
  return null
}

/**
 * A uprobe's probe point, PATH:OFFSET[%return] or PATH:SYMBOL[+OFFS][%return] (the last ':' ends
 * PATH, as in trace_uprobe.c), and the event name tracefs would give it.
 */
function parseUprobePlace(
  text: string,
  at: number,
  kind: 'p' | 'r',
): { target: UprobeTarget; kind: 'p' | 'r'; defaultEvent: string } {
  const colon = text.lastIndexOf(':')
  if (colon < 0 || colon < text.indexOf('/'))
    throw new ProbeSyntaxError(
      `bad probe point '${text}': a uprobe is PATH:OFFSET or PATH:SYMBOL[+OFFS] (no ':' after the path)`,
      at + text.length,
    )
  const path = text.slice(0, colon)
  let spec = text.slice(colon + 1)
  const specAt = at + colon + 1
  const paren = spec.indexOf('(')
  if (paren >= 0)
    throw new ProbeSyntaxError(
      'reference counter offsets (PATH:OFFSET(REF_CTR_OFFSET), for SDT semaphores) are not supported',
      specAt + paren,
    )
  const pct = spec.indexOf('%')
  if (pct >= 0) {
    if (spec.slice(pct) !== '%return')
      throw new ProbeSyntaxError(`bad suffix '${spec.slice(pct)}' (only %return is allowed)`, specAt + pct)
    kind = 'r'
    spec = spec.slice(0, pct)
  }
  // kbasename, cut at the first '.', '-' or '_' (as trace_uprobe.c names events), kept to a valid name.
  const tail = (path.slice(path.lastIndexOf('/') + 1).split(/[.\-_]/)[0] ?? '').replace(/[^A-Za-z0-9_]/g, '_')
  if (/^[0-9]/.test(spec)) {
    const v = kstrtoul(spec)
    if (v === null) throw new ProbeSyntaxError(`bad uprobe offset '${spec}'`, specAt)
    const offset = safeOffset(v, specAt)
    return { target: { path, offset }, kind, defaultEvent: `${kind}_${tail}_0x${offset.toString(16)}` }
  }
  const m = /^([A-Za-z_.$][A-Za-z0-9_.$]*)(?:\+([0-9][0-9a-fA-FxX]*))?$/.exec(spec)
  if (!m)
    throw new ProbeSyntaxError(
      `bad probe point '${text}' (expected PATH:OFFSET or PATH:SYMBOL[+OFFS])`,
      spec === '' ? specAt : at,
    )
  let offset = 0
  if (m[2] !== undefined) {
    const v = kstrtoul(m[2])
    if (v === null) throw new ProbeSyntaxError(`bad offset '${m[2]}'`, specAt + m[1].length + 1)
    offset = safeOffset(v, specAt + m[1].length + 1)
  }
  if (kind === 'r' && offset !== 0)
    throw new ProbeSyntaxError('a return probe must be at offset 0 of its function', at)
  return {
    target: { path, symbol: m[1], offset },
    kind,
    defaultEvent: `${kind}_${tail}_${m[1].replace(/[.$]/g, '_')}_${offset}`,
  }
}

/** Split on whitespace, keeping each token's offset. */
function tokens(line: string): { text: string; at: number }[] {
  const out: { text: string; at: number }[] = []
  const re = /\S+/g
  for (let m = re.exec(line); m; m = re.exec(line)) out.push({ text: m[0], at: m.index })
  return out
}

function parseGroupEvent(spec: string, at: number): { group?: string; event?: string } {
  if (spec === '') return {}
  const slash = spec.indexOf('/')
  const group = slash >= 0 ? spec.slice(0, slash) : undefined
  const event = slash >= 0 ? spec.slice(slash + 1) : spec
  if (group !== undefined && !NAME.test(group)) throw new ProbeSyntaxError(`bad group name '${group}'`, at)
  if (event !== '' && !NAME.test(event))
    throw new ProbeSyntaxError(`bad event name '${event}'`, at + (slash + 1))
  return { group, event: event === '' ? undefined : event }
}

/** Parse one kprobe_events or uprobe_events line (throws ProbeSyntaxError naming the problem and where). */
export function parseProbeDefinition(line: string): ProbeDefinition | ProbeDeletion {
  const toks = tokens(line)
  if (toks.length === 0) throw new ProbeSyntaxError('empty probe definition', 0)
  const head = toks[0]
  const h = /^([pr-])([0-9]*)(?::(.*))?$/.exec(head.text)
  if (!h) throw new ProbeSyntaxError(`a definition starts with 'p', 'r' or '-' (got '${head.text}')`, head.at)
  const kind = h[1] as 'p' | 'r' | '-'
  const nameSpec = h[3] ?? ''
  const names = parseGroupEvent(nameSpec, head.at + 2 + h[2].length)
  if (kind === '-') {
    if (!names.event) throw new ProbeSyntaxError("'-' needs an event name: -:[GRP/]EVENT", head.at)
    if (toks.length > 1) throw new ProbeSyntaxError('nothing may follow a deletion', toks[1].at)
    return { kind: '-', group: names.group ?? 'kprobes', event: names.event }
  }
  if (h[2] !== '' && kind !== 'r')
    throw new ProbeSyntaxError('MAXACTIVE is only for return probes (r)', head.at + 1)
  const maxactive = h[2] === '' ? 0 : Number(h[2])
  if (maxactive > 4096)
    throw new ProbeSyntaxError(`MAXACTIVE ${maxactive} is too large (at most 4096)`, head.at + 1)
  const place = toks[1]
  if (!place) throw new ProbeSyntaxError('missing the probe point: SYM[+OFFS] or an address', line.length)
  let target: ProbeDefinition['target']
  let defaultEvent: string
  // A '/' makes it a uprobe, as in tracefs (kernel symbols have none).
  const user = place.text.includes('/')
  let probeKind = kind
  if (user) {
    if (h[2] !== '')
      throw new ProbeSyntaxError('MAXACTIVE is only for kernel return probes (kretprobes)', head.at + 1)
    const u = parseUprobePlace(place.text, place.at, kind)
    target = u.target
    probeKind = u.kind
    defaultEvent = u.defaultEvent
  } else if (/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(place.text)) {
    if (kind === 'r')
      throw new ProbeSyntaxError('a return probe needs a symbol (SYM[+0]), not an address', place.at)
    const address = BigInt(place.text)
    target = { address }
    defaultEvent = `${kind}_0x${address.toString(16)}`
  } else {
    const m =
      /^(?:([A-Za-z_][A-Za-z0-9_]*):)?([A-Za-z_.][A-Za-z0-9_.]*)(?:\+((?:0x[0-9a-fA-F]+|[0-9]+)))?$/.exec(
        place.text,
      )
    if (!m)
      throw new ProbeSyntaxError(
        `bad probe point '${place.text}' (expected [MOD:]SYM[+OFFS] or an address)`,
        place.at,
      )
    const offset = m[3] ? Number(BigInt(m[3])) : 0
    if (kind === 'r' && offset !== 0)
      throw new ProbeSyntaxError('a return probe must be at offset 0 of its function', place.at)
    target = m[1] ? { symbol: m[2], offset, module: m[1] } : { symbol: m[2], offset }
    defaultEvent = `${kind}_${m[2].replace(/\./g, '_')}_${offset}`
  }
  const args: ProbeArg[] = []
  for (const t of toks.slice(2)) {
    if (args.length >= MAX_ARGS) throw new ProbeSyntaxError(`too many arguments (at most ${MAX_ARGS})`, t.at)
    let text = t.text
    let name = `arg${args.length + 1}`
    const eq = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(text)
    if (eq) {
      name = eq[1]
      text = text.slice(eq[0].length)
    }
    const fetchAt = t.at + (eq ? eq[0].length : 0)
    let type: FetchType | undefined
    const colon = text.lastIndexOf(':')
    if (colon > 0 && !text.slice(colon).includes(')')) {
      const ty = text.slice(colon + 1)
      if (!(TYPES as readonly string[]).includes(ty))
        throw new ProbeSyntaxError(`unknown type '${ty}'`, fetchAt + colon + 1)
      type = ty as FetchType
      text = text.slice(0, colon)
    }
    if (args.some((a) => a.name === name))
      throw new ProbeSyntaxError(`duplicate argument name '${name}'`, t.at)
    const fetch = parseFetch(text, fetchAt, probeKind, user)
    // $comm is a string; everything else defaults to the native word, shown in hex.
    args.push({ name, fetch, type: type ?? (fetch.kind === 'comm' ? 'string' : 'x64') })
  }
  return {
    kind: probeKind,
    group: names.group ?? (user ? 'uprobes' : 'kprobes'),
    event: names.event ?? defaultEvent,
    target,
    maxactive,
    args,
  }
}

function fetchText(f: FetchArg): string {
  switch (f.kind) {
    case 'reg':
      return `%${f.reg}`
    case 'mem':
      return `@0x${f.address.toString(16)}`
    case 'symbol':
      return `@${f.symbol}${f.offset > 0 ? `+${f.offset}` : f.offset < 0 ? `${f.offset}` : ''}`
    case 'stack':
      return `$stack${f.index}`
    case 'stackpointer':
      return '$stack'
    case 'retval':
      return '$retval'
    case 'comm':
      return '$comm'
    case 'imm':
      return `\\${f.value}`
    case 'deref':
      return `${f.offset < 0 ? '-' : '+'}${f.user ? 'u' : ''}${Math.abs(f.offset)}(${fetchText(f.inner)})`
    case 'fileoffset':
      return `@+0x${f.offset.toString(16)}`
  }
}

/** The normalised form, as reading kprobe_events back prints it. */
export function formatProbeDefinition(d: ProbeDefinition): string {
  const place =
    'path' in d.target
      ? // uprobe_events prints the offset as 0x%016lx.
        `${d.target.path}:${'symbol' in d.target ? `${d.target.symbol}${d.target.offset ? `+${d.target.offset}` : ''}` : `0x${d.target.offset.toString(16).padStart(16, '0')}`}`
      : 'address' in d.target
        ? `0x${d.target.address.toString(16).padStart(16, '0')}`
        : `${d.target.module ? `${d.target.module}:` : ''}${d.target.symbol}${d.target.offset ? `+${d.target.offset}` : ''}`
  const head = d.kind === 'r' ? `r${d.maxactive || ''}` : 'p'
  const args = d.args.map((a) => ` ${a.name}=${fetchText(a.fetch)}:${a.type}`).join('')
  return `${head}:${d.group}/${d.event} ${place}${args}`
}
