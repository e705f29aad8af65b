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

export interface ProbeDefinition {
  kind: 'p' | 'r'
  group: string
  event: string
  /** Probe point: a symbol with offset, or an absolute address. */
  target: { symbol: string; offset: number; module?: string } | { address: bigint }
  /** Return probes: instances to preallocate (0 = the default). */
  maxactive: number
  args: ProbeArg[]
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

function parseFetch(text: string, at: number, kind: 'p' | 'r'): FetchArg {
  if (text.startsWith('%')) {
    const reg = text.slice(1)
    if (!(FETCH_REGISTERS as readonly string[]).includes(reg))
      throw new ProbeSyntaxError(`unknown register '%${reg}'`, at)
    return { kind: 'reg', reg }
  }
  if (text.startsWith('@')) {
    const body = text.slice(1)
    if (/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(body)) return { kind: 'mem', address: BigInt(body) }
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
    return { kind: 'deref', offset, user: d[2] === 'u', inner: parseFetch(d[4], innerAt, kind) }
  }
  throw new ProbeSyntaxError(`bad fetch argument '${text}'`, at)
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

/** Parse one kprobe_events line (throws ProbeSyntaxError naming the problem and where). */
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
  if (/^(0x[0-9a-fA-F]+|[0-9]+)$/.test(place.text)) {
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
    const fetch = parseFetch(text, fetchAt, kind)
    // $comm is a string; everything else defaults to the native word, shown in hex.
    args.push({ name, fetch, type: type ?? (fetch.kind === 'comm' ? 'string' : 'x64') })
  }
  return {
    kind,
    group: names.group ?? 'kprobes',
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
  }
}

/** The normalised form, as reading kprobe_events back prints it. */
export function formatProbeDefinition(d: ProbeDefinition): string {
  const place =
    'address' in d.target
      ? `0x${d.target.address.toString(16).padStart(16, '0')}`
      : `${d.target.module ? `${d.target.module}:` : ''}${d.target.symbol}${d.target.offset ? `+${d.target.offset}` : ''}`
  const head = d.kind === 'r' ? `r${d.maxactive || ''}` : 'p'
  const args = d.args.map((a) => ` ${a.name}=${fetchText(a.fetch)}:${a.type}`).join('')
  return `${head}:${d.group}/${d.event} ${place}${args}`
}
