/// <reference types="node" />
// The host side of the SSE/MMX differential tests: native/sse-oracle runs
// cases (code, GPRs, RFLAGS, MXCSR, XMM registers, one data page) on the
// host CPU, starting from the fninit x87 state; runEmu runs the same case
// in the emulator (support/flat.ts). See native/sse-oracle.c for the protocol.

import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { type FlatOutcome, runFlat } from './flat.js'

const ORACLE = fileURLToPath(new URL('../../native/sse-oracle', import.meta.url))
const PAGE = 4096

export function oracleAvailable(): boolean {
  return process.arch === 'x64' && process.platform === 'linux' && existsSync(ORACLE)
}
export function unavailableReason(): string {
  if (process.arch !== 'x64' || process.platform !== 'linux')
    return `the native SSE oracle runs only on x86-64 Linux (this is ${process.platform}/${process.arch})`
  return `${ORACLE} is missing (run native/rebuild.sh)`
}

export interface OracleCase {
  code: Uint8Array
  gpr: bigint[]
  rflags: bigint
  mxcsr: number
  /** XMM0-15, 256 bytes. */
  xmm: Uint8Array
  /** The data page. */
  data: Uint8Array
}

export interface OracleOutcome {
  gpr: bigint[]
  rflags: bigint
  rip: bigint
  /** vector -2: the host's watchdog fired. */
  fault: null | { vector: number; errorCode: number }
  mxcsr: number
  xmm: Uint8Array
  data: Uint8Array
}

const CASE_MAGIC = 0x43455353
const RESULT_MAGIC = 0x52455353
const RESULT_SIZE = 16 + 128 + 24 + 8 + 256 + PAGE

function encodeCase(c: OracleCase): Buffer {
  const buf = Buffer.alloc(8 + 136 + 8 + 256 + PAGE + c.code.length)
  buf.writeUInt32LE(CASE_MAGIC, 0)
  buf.writeUInt32LE(c.code.length, 4)
  for (let i = 0; i < 16; i++) buf.writeBigUInt64LE(BigInt.asUintN(64, c.gpr[i]), 8 + 8 * i)
  buf.writeBigUInt64LE(c.rflags, 136)
  buf.writeUInt32LE(c.mxcsr, 144)
  buf.set(c.xmm, 152)
  buf.set(c.data, 152 + 256)
  buf.set(c.code, 152 + 256 + PAGE)
  return buf
}

/** Run the cases on the host CPU. */
export function runNative(cases: OracleCase[]): OracleOutcome[] {
  const res = spawnSync(ORACLE, [], {
    input: Buffer.concat(cases.map(encodeCase)),
    maxBuffer: RESULT_SIZE * cases.length + 4096,
  })
  if (res.error) throw res.error
  if (res.status !== 0) throw new Error(`sse-oracle exited with ${res.status}: ${res.stderr}`)
  const out = res.stdout
  if (out.length !== RESULT_SIZE * cases.length) throw new Error(`sse-oracle returned ${out.length} bytes`)
  return cases.map((_, k) => {
    const o = k * RESULT_SIZE
    if (out.readUInt32LE(o) !== RESULT_MAGIC) throw new Error('bad sse-oracle result')
    const vector = out.readInt32LE(o + 4)
    const gpr: bigint[] = []
    for (let i = 0; i < 16; i++) gpr.push(out.readBigUInt64LE(o + 16 + 8 * i))
    return {
      gpr,
      rflags: out.readBigUInt64LE(o + 144),
      rip: out.readBigUInt64LE(o + 152),
      fault:
        vector >= 0
          ? { vector, errorCode: out.readUInt32LE(o + 8) }
          : vector === -2
            ? { vector, errorCode: 0 }
            : null,
      mxcsr: out.readUInt32LE(o + 168),
      xmm: new Uint8Array(out.subarray(o + 176, o + 176 + 256)),
      data: new Uint8Array(out.subarray(o + 432, o + 432 + PAGE)),
    }
  })
}

/**
 * Run a case in the emulator (`jitThreshold` 0: block compiler, Infinity:
 * interpreter), with CR0.NE and CR4.OSFXSR/OSXMMEXCPT set as Linux sets them
 * (unmasked FP exceptions become #MF/#XM as on the host); an emulator error
 * comes back as its message.
 */
export function runEmu(c: OracleCase, jitThreshold: number): OracleOutcome | string {
  try {
    const r: FlatOutcome = runFlat(
      {
        code: c.code,
        gpr: c.gpr,
        rflags: c.rflags,
        data: c.data,
        xmm: c.xmm,
        mxcsr: c.mxcsr,
        linuxFpu: true,
      },
      10_000,
      jitThreshold,
    )
    return r
  } catch (e) {
    return e instanceof Error ? e.message : String(e)
  }
}

const MODES = [
  { name: 'interpreter', jitThreshold: Number.POSITIVE_INFINITY },
  { name: 'block compiler', jitThreshold: 0 },
]

/**
 * Run a group's cases on the host and in both emulator modes; returns the
 * "form [mode]" keys that mismatched (after printing a summary with up to
 * `show` detailed failures under `label`).
 */
export function differentialGroup<C extends OracleCase & { form: string }>(
  label: string,
  cases: C[],
  casesPerForm: number,
  show: number,
  compare: (c: C, native: OracleOutcome, emu: OracleOutcome) => string[],
  describeCase: (c: C) => string,
): string[] {
  const native = runNative(cases)
  const failures: string[] = []
  const failed = new Map<string, number>()
  cases.forEach((c, i) => {
    if (native[i].fault?.vector === -2) throw new Error(`${describeCase(c)}: host watchdog`)
    for (const mode of MODES) {
      const emu = runEmu(c, mode.jitThreshold)
      const diffs = typeof emu === 'string' ? [`emulator threw: ${emu}`] : compare(c, native[i], emu)
      if (diffs.length === 0) continue
      const key = `${c.form} [${mode.name}]`
      failed.set(key, (failed.get(key) ?? 0) + 1)
      if (failures.length < show)
        failures.push(`[${mode.name}] ${describeCase(c)}\n    ${diffs.join('\n    ')}`)
    }
  })
  if (failed.size) {
    const summary = [...failed].map(([f, n]) => `  ${n}/${casesPerForm}  ${f}`).join('\n')
    console.log(`${label}: ${failed.size} form/mode pairs mismatch\n${summary}\n\n${failures.join('\n\n')}`)
  }
  return [...failed.keys()]
}

/**
 * A differential suite: one test per group of forms, each running casesPerForm
 * cases of every form natively and emulated (differentialGroup) and expecting
 * no form to mismatch; skipped with the reason where the oracle cannot run.
 */
export function differentialSuite<
  F extends { group: string },
  C extends OracleCase & { form: string },
>(options: {
  title: string
  tag: string
  forms: readonly F[]
  casesPerForm: number
  caseFor: (form: F, i: number) => C
  show: number
  compare: (c: C, native: OracleOutcome, emu: OracleOutcome) => string[]
  describeCase: (c: C) => string
}): void {
  const groups = new Map<string, F[]>()
  for (const f of options.forms) groups.set(f.group, [...(groups.get(f.group) ?? []), f])
  describe(options.title, () => {
    if (!oracleAvailable()) {
      it.skip(`skipped: ${unavailableReason()}`, () => {})
      return
    }
    for (const [group, gforms] of groups) {
      it(`${group}: ${gforms.length} forms x ${options.casesPerForm} cases`, { timeout: 120_000 }, () => {
        const cases = gforms.flatMap((f) =>
          Array.from({ length: options.casesPerForm }, (_, i) => options.caseFor(f, i)),
        )
        const failed = differentialGroup(
          `[${options.tag}] ${group}`,
          cases,
          options.casesPerForm,
          options.show,
          options.compare,
          options.describeCase,
        )
        expect(failed).toEqual([])
      })
    }
  })
}
