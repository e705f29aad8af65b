// The decoder against capstone 5 (capstone-wasm): instruction lengths must
// agree, or both must reject, except for the explained disagreements in
// CAPSTONE_ALLOW_LIST (test/support/capstone.ts).

import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DecodeError, type Instruction, tryDecode } from '../src/decoder/index.js'
import {
  CAPSTONE_ALLOW_LIST,
  type CapstoneX64,
  type Decoded,
  explain,
  openCapstone,
} from './support/capstone.js'
import { executableRegions, isElf64 } from './support/elf-text.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..')
const SYSTEM_BINARIES = ['/usr/bin/bash', '/usr/lib/x86_64-linux-gnu/libc.so.6']
/** Cap on code swept per file, so a large fixture (a vmlinux) cannot blow the time budget. */
const MAX_CODE_PER_FILE = 4 << 20

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0')).join(' ')

let cs: CapstoneX64
beforeAll(async () => {
  cs = await openCapstone()
})
afterAll(() => cs?.close())

interface Tally {
  compared: number
  bothOk: number
  bothRejected: number
  allowed: Map<string, number>
  unexplained: string[]
}

function newTally(): Tally {
  return { compared: 0, bothOk: 0, bothRejected: 0, allowed: new Map(), unexplained: [] }
}

/** Compare one decode with capstone's; record agreement, an allow-listed difference, or a failure. */
function compare(t: Tally, bytes: Uint8Array, address: number, ours: Decoded, where = ''): void {
  const c = cs.one(bytes, address)
  t.compared++
  const ourLen = ours instanceof DecodeError ? -1 : ours.length
  if (c !== null && c.size === ourLen) {
    t.bothOk++
    return
  }
  if (c === null && ourLen < 0) {
    t.bothRejected++
    return
  }
  const entry = explain({ bytes, ours, cs: c, decode: (b) => tryDecode(b, address), capstone: cs })
  if (entry) {
    t.allowed.set(entry.id, (t.allowed.get(entry.id) ?? 0) + 1)
    return
  }
  if (t.unexplained.length < 20) {
    const mine = ours instanceof DecodeError ? ours.reason : `${ours.mnemonic} (${ours.length} bytes)`
    const theirs = c ? `${c.mnemonic} ${c.opStr} (${c.size} bytes)` : 'rejected'
    t.unexplained.push(
      `${where}${hex(bytes.subarray(0, Math.max(ourLen, c?.size ?? 0, 8)))}: decoder ${mine}, capstone ${theirs}`,
    )
  } else t.unexplained.push('')
}

function report(label: string, t: Tally): string {
  const allowed = [...t.allowed.entries()].map(([k, v]) => `${k}=${v}`).join(', ') || 'none'
  return `${label}: ${t.compared} compared, ${t.bothOk} same length, ${t.bothRejected} both rejected, allow-listed: ${allowed}, unexplained: ${t.unexplained.length}`
}

// xorshift32: deterministic and fast.
function rng(seed: number) {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s
  }
}

const LEGACY = [0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x3e, 0x26, 0x36, 0x64, 0x65]

/**
 * 15-byte strings: a fifth fully random, the rest shaped like real code —
 * optional legacy prefixes and REX, then an opcode map or escape chosen with
 * fixed weights, with mostly well-formed VEX/EVEX/XOP header fields (map
 * select in range, 66 as the usual pp, vvvv often unused) so that every map,
 * including the sparse ones, decodes often enough to be compared.
 */
function generator(seed: number) {
  const next = rng(seed)
  const byte = () => next() & 0xff
  const chance = (percent: number) => next() % 100 < percent
  const out = new Uint8Array(15)
  // Weights per escape: 1-byte, 0F, 0F38, 0F3A, VEX2, VEX3, EVEX, XOP, 3DNow!, x87.
  const weights = [14, 14, 8, 8, 8, 12, 16, 10, 5, 5]
  const total = weights.reduce((a, b) => a + b)
  const pick = () => {
    let r = next() % total
    let i = 0
    while (r >= weights[i]) r -= weights[i++]
    return i
  }
  const pp = () => (chance(50) ? 1 : next() & 3)
  const vvvv = () => (chance(60) ? 0xf : next() & 0xf) << 3
  return (): Uint8Array => {
    const b: number[] = []
    if (chance(20)) {
      for (let i = 0; i < 15; i++) b.push(byte())
    } else {
      if (chance(25)) for (let n = next() % 4; n > 0; n--) b.push(LEGACY[next() % LEGACY.length])
      const kind = pick()
      if ((kind === 2 || kind === 3) && chance(50)) b.push(0x66)
      if (chance(30)) b.push(0x40 | (next() & 15))
      switch (kind) {
        case 1:
          b.push(0x0f)
          break
        case 2:
          b.push(0x0f, 0x38)
          break
        case 3:
          b.push(0x0f, 0x3a)
          break
        case 4:
          b.push(0xc5, (byte() & 0x80) | vvvv() | (byte() & 4) | pp())
          break
        case 5:
          b.push(
            0xc4,
            (byte() & 0xe0) | (chance(90) ? 1 + (next() % 3) : byte() & 0x1f),
            (byte() & 0x84) | vvvv() | pp(),
          )
          break
        case 6: {
          const p0 = (byte() & 0xf0) | (chance(90) ? 1 + (next() % 3) : byte() & 0x0f)
          const p1 = (byte() & 0x80) | vvvv() | (chance(95) ? 4 : 0) | pp()
          const ll = chance(90) ? next() % 3 : 3
          const p2 =
            (chance(10) ? 0x80 : 0) |
            (ll << 5) |
            (chance(15) ? 0x10 : 0) |
            (chance(85) ? 8 : 0) |
            (chance(50) ? next() & 7 : 0)
          b.push(0x62, p0, p1, p2)
          break
        }
        case 7:
          b.push(
            0x8f,
            (byte() & 0xe0) | (chance(90) ? 8 + (next() % 3) : byte() & 0x1f),
            (chance(25) ? 0x80 : 0) | vvvv() | (chance(80) ? 0 : 4) | (chance(90) ? 0 : next() & 3),
          )
          break
        case 8:
          b.push(0x0f, 0x0f)
          break
        case 9:
          b.push(0xd8 + (next() & 7))
          break
      }
      while (b.length < 15) b.push(byte())
    }
    out.set(b.slice(0, 15))
    return out
  }
}

describe('decoder vs capstone', () => {
  // DECODER_FUZZ_N / DECODER_FUZZ_SEED widen the search when hunting for new disagreements.
  const N = Number(process.env.DECODER_FUZZ_N ?? 150_000)
  const seed = Number(process.env.DECODER_FUZZ_SEED ?? 0x5eed1234)
  it(`agrees on ${N} pseudo-random byte strings (seed ${seed})`, () => {
    const gen = generator(seed)
    const t = newTally()
    const reached = new Map<string, number>()
    const address = 0x40_1000
    for (let i = 0; i < N; i++) {
      const bytes = gen()
      const ours = tryDecode(bytes, address)
      if (!(ours instanceof DecodeError)) {
        const key = `${ours.encoding}/${ours.map.toString(16)}`
        reached.set(key, (reached.get(key) ?? 0) + 1)
      }
      compare(t, bytes, address, ours)
    }
    console.log(report('random', t))
    console.log(`decoded by map: ${[...reached.entries()].map(([k, v]) => `${k}=${v}`).join(' ')}`)
    expect(t.unexplained.filter(Boolean), t.unexplained.slice(0, 20).join('\n')).toEqual([])
    // Every map and escape was exercised with valid instructions.
    for (const key of [
      'legacy/0',
      'legacy/1',
      'legacy/2',
      'legacy/3',
      '3dnow/f0f',
      'vex/1',
      'vex/2',
      'vex/3',
      'evex/1',
      'evex/2',
      'evex/3',
      'xop/8',
      'xop/9',
    ]) {
      expect(reached.get(key) ?? 0, key).toBeGreaterThan(100)
    }
    expect(reached.get('xop/a') ?? 0, 'xop/a (two opcodes)').toBeGreaterThan(3)
    expect(t.bothOk).toBeGreaterThan(N / 3)
  })

  it('has a small, explained allow-list', () => {
    expect(CAPSTONE_ALLOW_LIST.length).toBeLessThanOrEqual(12)
    for (const e of CAPSTONE_ALLOW_LIST) expect(e.reason.length).toBeGreaterThan(20)
  })
})

function findElfFiles(): string[] {
  const found: string[] = []
  const walk = (dir: string, depth: number) => {
    if (depth > 8 || !existsSync(dir)) return
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name.startsWith('.')) continue
      const p = join(dir, name)
      const st = statSync(p)
      if (st.isDirectory()) walk(p, depth + 1)
      else if (st.isFile() && st.size >= 64) {
        const head = readFileSync(p).subarray(0, 64)
        // ELF64 little-endian, e_machine x86-64.
        if (isElf64(head) && head[18] === 62 && head[19] === 0) found.push(p)
      }
    }
  }
  const packages = join(ROOT, 'packages')
  for (const pkg of existsSync(packages) ? readdirSync(packages) : []) {
    walk(join(packages, pkg, 'fixtures'), 0)
    walk(join(packages, pkg, 'native'), 0)
  }
  return found.sort()
}

/** Linear sweep guided by capstone: compare every instruction it decodes; skip a byte where it cannot. */
function sweep(
  t: Tally,
  label: string,
  file: Uint8Array,
): { bytes: number; mnemonicsSame: number; mnemonicsCompared: number } {
  let budget = MAX_CODE_PER_FILE
  let mnemonicsSame = 0
  let mnemonicsCompared = 0
  let swept = 0
  for (const region of executableRegions(file)) {
    const code = region.bytes.subarray(0, Math.min(region.bytes.length, budget))
    budget -= code.length
    swept += code.length
    let off = 0
    while (off < code.length) {
      const batch = cs.many(code.subarray(off, off + 8192), region.address + off)
      if (batch.length === 0) {
        off++
        continue
      }
      for (const c of batch) {
        const address = region.address + off
        const ours = tryDecode(code, address, off)
        const ourLen = ours instanceof DecodeError ? -1 : ours.length
        if (ourLen === c.size) {
          t.compared++
          t.bothOk++
          const m = normalizeMnemonic(c.mnemonic)
          if ((ours as Instruction).encoding === 'legacy') {
            mnemonicsCompared++
            if (m === (ours as Instruction).mnemonic) mnemonicsSame++
          }
        } else
          compare(
            t,
            code.subarray(off, off + 15),
            address,
            ours,
            `${label} ${region.name}+0x${off.toString(16)}: `,
          )
        off += c.size
      }
    }
    if (budget <= 0) break
  }
  return { bytes: swept, mnemonicsSame, mnemonicsCompared }
}

/** capstone prints prefixes into the mnemonic ('rep stosq', 'lock cmpxchg'); the decoder keeps them as fields. */
function normalizeMnemonic(m: string): string {
  return m.replace(/^((rep|repe|repne|lock|bnd|notrack|xacquire|xrelease|data16|addr32) )+/, '')
}

describe('decoder vs capstone on real code', () => {
  const fixtures = findElfFiles()
  const system = SYSTEM_BINARIES.filter((p) => existsSync(p))

  it.skipIf(fixtures.length === 0)('agrees on every instruction of the binary fixtures', () => {
    const t = newTally()
    let bytes = 0
    for (const path of fixtures) bytes += sweep(t, relative(ROOT, path), readFileSync(path)).bytes
    console.log(report(`fixtures (${fixtures.length} files, ${bytes} code bytes)`, t))
    expect(t.unexplained.filter(Boolean), t.unexplained.slice(0, 20).join('\n')).toEqual([])
    expect(t.bothOk).toBeGreaterThan(0)
  })
  if (fixtures.length === 0)
    console.log('no ELF fixtures under packages/*/fixtures or packages/*/native: fixture sweep skipped')

  it.skipIf(system.length === 0)('agrees on every instruction of system binaries (bash, libc)', () => {
    const t = newTally()
    let bytes = 0
    let same = 0
    let compared = 0
    for (const path of system) {
      const r = sweep(t, path, readFileSync(path))
      bytes += r.bytes
      same += r.mnemonicsSame
      compared += r.mnemonicsCompared
    }
    console.log(report(`system binaries (${system.join(', ')}, ${bytes} code bytes)`, t))
    console.log(`legacy-encoded mnemonics spelled like capstone: ${same}/${compared}`)
    expect(t.unexplained.filter(Boolean), t.unexplained.slice(0, 20).join('\n')).toEqual([])
    expect(t.bothOk).toBeGreaterThan(10_000)
  })
  if (system.length === 0)
    console.log(`none of ${SYSTEM_BINARIES.join(', ')} exists: system binary sweep skipped`)
})
