/// <reference types="node" />
// The host CPU as an oracle: drives the committed native/regs-oracle binary
// (see native/regs-oracle.c for the protocol) and the native workload builds.

import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const NATIVE_DIR = fileURLToPath(new URL('../../native/', import.meta.url))
export const ORACLE_PATH = `${NATIVE_DIR}regs-oracle`

export const CODE_ADDRESS = 0x10000000n
export const DATA_ADDRESS = 0x20000000n
export const PAGE_SIZE = 4096
/** Longest code sequence the oracle accepts (one page less its 14-byte exit jump). */
export const MAX_CODE_LENGTH = PAGE_SIZE - 16

/** RFLAGS bits the oracle takes from a case: CF PF AF ZF SF DF OF. */
export const INPUT_RFLAGS_MASK = 0xcd5n
/** RFLAGS bits the oracle reports: CF PF AF ZF SF TF DF OF IOPL NT, and bit 1 (always 1). */
export const COMPARED_RFLAGS_MASK = 0x7dd7n

/** Same shape as flat.ts's FlatCase. */
export interface NativeCase {
  code: Uint8Array
  gpr: bigint[]
  rflags: bigint
  data: Uint8Array
}

/** Same shape as flat.ts's FlatOutcome, plus what only the host knows. */
export interface NativeOutcome {
  gpr: bigint[]
  rflags: bigint
  data: Uint8Array
  rip: bigint
  fault: null | { vector: number; errorCode: number }
  /** The signal the fault arrived as (0 when none). */
  signal: number
  /** Page-fault linear address (CR2) for vector 14, else 0. */
  cr2: bigint
  /** True when the oracle's 2-second watchdog stopped the case. */
  timedOut: boolean
}

const CASE_MAGIC = 0x45534143
const RESULT_MAGIC = 0x544c5352
const RESULT_SIZE = 16 + 16 * 8 + 3 * 8 + PAGE_SIZE

/** True where the committed oracle can run: x86-64 Linux with the binary present. */
export function nativeOracleAvailable(): boolean {
  return process.arch === 'x64' && process.platform === 'linux' && existsSync(ORACLE_PATH)
}

/** Why nativeOracleAvailable() is false, for skip messages. */
export function nativeUnavailableReason(): string {
  if (process.arch !== 'x64' || process.platform !== 'linux')
    return `the native oracle runs only on x86-64 Linux (this is ${process.platform}/${process.arch})`
  if (!existsSync(ORACLE_PATH)) return `${ORACLE_PATH} is missing (run native/rebuild.sh)`
  return ''
}

export function encodeCase(c: NativeCase): Buffer {
  if (c.gpr.length !== 16) throw new Error(`a case needs 16 GPRs, got ${c.gpr.length}`)
  if (c.data.length !== PAGE_SIZE) throw new Error(`a case needs a ${PAGE_SIZE}-byte data page`)
  if (c.code.length > MAX_CODE_LENGTH) throw new Error(`code too long (${c.code.length} bytes)`)
  const buf = Buffer.alloc(8 + 17 * 8 + PAGE_SIZE + c.code.length)
  buf.writeUInt32LE(CASE_MAGIC, 0)
  buf.writeUInt32LE(c.code.length, 4)
  for (let i = 0; i < 16; i++) buf.writeBigUInt64LE(BigInt.asUintN(64, c.gpr[i]), 8 + i * 8)
  buf.writeBigUInt64LE(BigInt.asUintN(64, c.rflags), 8 + 128)
  buf.set(c.data, 8 + 136)
  buf.set(c.code, 8 + 136 + PAGE_SIZE)
  return buf
}

function decodeResult(buf: Buffer, off: number): NativeOutcome {
  if (buf.readUInt32LE(off) !== RESULT_MAGIC) throw new Error(`bad oracle result magic at ${off}`)
  const vector = buf.readInt32LE(off + 4)
  const errorCode = buf.readUInt32LE(off + 8)
  const signal = buf.readUInt32LE(off + 12)
  const gpr: bigint[] = []
  for (let i = 0; i < 16; i++) gpr.push(buf.readBigUInt64LE(off + 16 + i * 8))
  const rflags = buf.readBigUInt64LE(off + 144)
  const rip = buf.readBigUInt64LE(off + 152)
  const cr2 = buf.readBigUInt64LE(off + 160)
  const data = new Uint8Array(buf.subarray(off + 168, off + 168 + PAGE_SIZE))
  return {
    gpr,
    rflags,
    data,
    rip,
    fault: vector >= 0 ? { vector, errorCode } : null,
    signal,
    cr2,
    timedOut: vector === -2,
  }
}

/** Run a batch of cases through one oracle process. */
export function runNativeBatch(cases: readonly NativeCase[]): NativeOutcome[] {
  if (cases.length === 0) return []
  const input = Buffer.concat(cases.map(encodeCase))
  const res = spawnSync(ORACLE_PATH, [], { input, maxBuffer: RESULT_SIZE * cases.length + 4096 })
  if (res.error) throw res.error
  if (res.status !== 0)
    throw new Error(
      `regs-oracle exited with ${res.status ?? res.signal}: ${res.stderr?.toString('utf8') ?? ''}`.trim(),
    )
  const out = res.stdout
  if (out.length !== RESULT_SIZE * cases.length)
    throw new Error(`regs-oracle returned ${out.length} bytes for ${cases.length} cases`)
  const results: NativeOutcome[] = []
  for (let i = 0; i < cases.length; i++) results.push(decodeResult(out, i * RESULT_SIZE))
  return results
}

/** Run one native workload build; returns its stdout and exit status. */
export function runNativeProgram(path: string, args: string[] = []): { stdout: string; status: number } {
  const res = spawnSync(path, args, { maxBuffer: 64 << 20 })
  if (res.error) throw res.error
  if (res.status === null) throw new Error(`${path} was killed by ${res.signal}`)
  return { stdout: res.stdout.toString('latin1'), status: res.status }
}
