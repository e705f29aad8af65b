/// <reference types="node" />
// Differential test: every instruction form of test/support/instruction-forms.ts,
// N random cases each, run on the host CPU (native/regs-oracle, one process per
// group) and in the emulator (runFlat). GPRs, RFLAGS (less the bits the SDM leaves
// undefined for the case), the data page, the exception (vector, error code) and
// rip must agree.
//
// Knobs (environment):
//   X86EMU_DIFF_CASES=n    cases per form (default 6)
//   X86EMU_DIFF_SEED=n     another deterministic set of cases (default 1)
//   X86EMU_DIFF_FILTER=re  only forms whose name matches the regular expression
//   X86EMU_DIFF_SHOW=n     mismatches printed per group (default 5)

import { describe, expect, it } from 'vitest'
import { compareOutcomes, describeMismatch, type Outcome } from './support/diff-compare.js'
import { FLAT_CODE_ADDRESS, FLAT_DATA_ADDRESS, runFlat } from './support/flat.js'
import {
  CODE_BASE,
  DATA_BASE,
  type GeneratedCase,
  generateCases,
  INSTRUCTION_FORMS,
  type InstructionForm,
} from './support/instruction-forms.js'
import { nativeOracleAvailable, nativeUnavailableReason, runNativeBatch } from './support/native.js'

const CASES = Number(process.env.X86EMU_DIFF_CASES ?? 6)
const SEED = Number(process.env.X86EMU_DIFF_SEED ?? 1)
const SHOW = Number(process.env.X86EMU_DIFF_SHOW ?? 5)
const FILTER = process.env.X86EMU_DIFF_FILTER ? new RegExp(process.env.X86EMU_DIFF_FILTER) : null

const selected = INSTRUCTION_FORMS.filter((f) => !FILTER || FILTER.test(f.name))
const groups = new Map<string, InstructionForm[]>()
for (const f of selected) groups.set(f.group, [...(groups.get(f.group) ?? []), f])

/** The interpreter (jitThreshold Infinity) and the block compiler (0) must both match the CPU. */
const MODES = [
  { name: 'interpreter', jitThreshold: Number.POSITIVE_INFINITY },
  { name: 'block compiler', jitThreshold: 0 },
]

function runEmulator(c: GeneratedCase, jitThreshold: number): Outcome {
  try {
    return runFlat({ code: c.code, gpr: c.gpr, rflags: c.rflags, data: c.data }, 1_000_000, jitThreshold)
  } catch (e) {
    // An emulator exception (unimplemented instruction, runaway case) is a mismatch, not a crash.
    const msg = e instanceof Error ? e.message : String(e)
    return {
      gpr: c.gpr.map(() => -1n),
      rflags: 0n,
      data: new Uint8Array(4096),
      rip: -1n,
      fault: { vector: -1, errorCode: 0 },
      threw: msg,
    } as Outcome
  }
}

describe('differential: emulator vs host CPU', () => {
  if (!nativeOracleAvailable()) {
    it.skip(`skipped: ${nativeUnavailableReason()}`, () => {})
    return
  }

  it('uses the same flat layout as the oracle', () => {
    expect(FLAT_CODE_ADDRESS).toBe(CODE_BASE)
    expect(FLAT_DATA_ADDRESS).toBe(DATA_BASE)
  })

  for (const [group, forms] of groups) {
    it(`${group}: ${forms.length} forms x ${CASES} cases`, { timeout: 120_000 }, () => {
      const cases = forms.flatMap((f) => generateCases(f, CASES, SEED))
      const native = runNativeBatch(cases)
      const failures: string[] = []
      const failedForms = new Map<string, number>()
      cases.forEach((c, i) => {
        for (const mode of MODES) {
          const emu = runEmulator(c, mode.jitThreshold)
          const threw = (emu as Outcome & { threw?: string }).threw
          const diffs = threw ? [`emulator threw: ${threw}`] : compareOutcomes(c, native[i], emu)
          if (diffs.length === 0) continue
          const key = `${c.form} [${mode.name}]`
          failedForms.set(key, (failedForms.get(key) ?? 0) + 1)
          if (failures.length < SHOW)
            failures.push(
              threw ? `${key}: ${diffs[0]}` : `[${mode.name}] ${describeMismatch(c, native[i], emu, diffs)}`,
            )
        }
      })
      if (failedForms.size) {
        const summary = [...failedForms].map(([f, n]) => `  ${n}/${CASES}  ${f}`).join('\n')
        console.log(
          `[differential] ${group}: ${failedForms.size} of ${forms.length} forms mismatch\n${summary}\n\n${failures.join('\n\n')}`,
        )
      }
      expect([...failedForms.keys()]).toEqual([])
    })
  }
})
