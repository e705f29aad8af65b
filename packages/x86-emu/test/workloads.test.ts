/// <reference types="node" />
// C workloads (native/workloads/*.c): the bare build runs in the emulator
// (runBare) and must print exactly what the native build prints on the host,
// and exit with the same status. Off x86-64 Linux the committed reference
// output (native/workloads/expected/, written by rebuild.sh from the native
// build) stands in for the native run.
//
// Also: the integer workloads' bare builds contain no SSE/x87/MMX code, and native/rebuild.sh
// reproduces the committed binaries byte for byte (same toolchain only).

import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadBare, runBare } from './support/bare.js'
import { type DisassembledInsn, loadDisassembler } from './support/diff-capstone.js'
import { NATIVE_DIR, runNativeProgram } from './support/native.js'

const WORKLOADS = ['intmix', 'selfcheck', 'fpmix', 'calls', 'crcloop'] as const
/** Built with -mgeneral-regs-only: they exercise the integer core alone. */
const INTEGER_ONLY: readonly string[] = ['intmix', 'selfcheck', 'calls', 'crcloop']
const onHost = process.arch === 'x64' && process.platform === 'linux'

function reference(name: string): { stdout: string; status: number } {
  return {
    stdout: readFileSync(join(NATIVE_DIR, 'workloads/expected', `${name}.stdout`), 'latin1'),
    status: Number(readFileSync(join(NATIVE_DIR, 'workloads/expected', `${name}.status`), 'utf8').trim()),
  }
}

function bareElf(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(NATIVE_DIR, 'workloads', `${name}-bare`)))
}

/** The executable PT_LOAD segments of an ELF64 file: [vaddr, bytes]. */
function executableSegments(elf: Uint8Array): Array<[number, Uint8Array]> {
  const view = new DataView(elf.buffer, elf.byteOffset, elf.byteLength)
  const phoff = Number(view.getBigUint64(0x20, true))
  const phentsize = view.getUint16(0x36, true)
  const phnum = view.getUint16(0x38, true)
  const out: Array<[number, Uint8Array]> = []
  for (let i = 0; i < phnum; i++) {
    const p = phoff + i * phentsize
    const type = view.getUint32(p, true)
    const flags = view.getUint32(p + 4, true)
    if (type !== 1 || !(flags & 1)) continue
    const offset = Number(view.getBigUint64(p + 8, true))
    const vaddr = Number(view.getBigUint64(p + 16, true))
    const filesz = Number(view.getBigUint64(p + 32, true))
    out.push([vaddr, elf.subarray(offset, offset + filesz)])
  }
  return out
}

// Natively each workload runs about 4 M instructions; 40 M catches a runaway quickly.
const BUDGET = 40_000_000

/** After runBare failed: run again with loadBare to show what the program printed before it went wrong. */
function partialOutput(name: string): string {
  try {
    const { machine, out } = loadBare(bareElf(name))
    const r = machine.run({ maxInstructions: BUDGET })
    return `stopped: ${r.reason}${r.detail ? ` (${r.detail})` : ''}; stdout so far:\n${out.stdout}`
  } catch (e) {
    return `(no partial output: ${e instanceof Error ? e.message : e})`
  }
}

describe.each(WORKLOADS)('workload %s', (name) => {
  it.skipIf(!onHost)('native build prints the committed reference output (runs on x86-64 Linux only)', () => {
    const native = runNativeProgram(join(NATIVE_DIR, 'workloads', `${name}-native`))
    const ref = reference(name)
    expect(native.stdout).toBe(ref.stdout)
    expect(native.status).toBe(ref.status)
    if (name === 'selfcheck') {
      expect(native.stdout).toContain('failures=0\n')
      expect(native.status).toBe(0)
    }
  })

  it(`bare build under runBare prints and exits like the native build${onHost ? '' : ' (committed reference)'}`, {
    timeout: 300_000,
  }, () => {
    const want = onHost ? runNativeProgram(join(NATIVE_DIR, 'workloads', `${name}-native`)) : reference(name)
    const t0 = performance.now()
    let got: ReturnType<typeof runBare>
    try {
      got = runBare(bareElf(name), { maxInstructions: BUDGET })
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : e}\n${partialOutput(name)}`)
    }
    const ms = performance.now() - t0
    console.log(
      `[workloads] ${name}: ${got.instructions} instructions in ${ms.toFixed(0)} ms` +
        ` (${(got.instructions / ms / 1000).toFixed(2)} M/s), exit ${got.exitCode}`,
    )
    expect(got.stdout).toBe(want.stdout)
    expect(got.exitCode).toBe(want.status)
  })

  it.skipIf(!INTEGER_ONLY.includes(name))('bare build has no SSE, AVX, MMX or x87 instructions', async () => {
    const cs = await loadDisassembler()
    const bad: string[] = []
    try {
      for (const [vaddr, bytes] of executableSegments(bareElf(name))) {
        let off = 0
        while (off < bytes.length) {
          const insns: DisassembledInsn[] = cs.disasm(bytes.subarray(off), vaddr + off)
          for (const i of insns) {
            const text = `${i.mnemonic} ${i.opStr}`
            if (/\b([xyz]mm\d+|mm\d|st\(\d\))\b/.test(text) || /^f[a-z]/.test(i.mnemonic))
              bad.push(`${Number(i.address).toString(16)}: ${text}`)
          }
          off += insns.reduce((n, i) => n + i.size, 0) || 1
        }
      }
    } finally {
      cs.close()
    }
    expect(bad.slice(0, 10)).toEqual([])
  })
})

const gccVersion = onHost ? spawnSync('gcc', ['--version'], { encoding: 'utf8' }) : null
const haveGcc = gccVersion !== null && gccVersion.status === 0

describe('native/rebuild.sh', () => {
  it.skipIf(!haveGcc)('reproduces the committed binaries byte for byte', { timeout: 180_000 }, (ctx) => {
    const out = mkdtempSync(join(tmpdir(), 'x86-emu-native-'))
    try {
      const res = spawnSync('sh', [join(NATIVE_DIR, 'rebuild.sh'), out], { encoding: 'utf8' })
      expect(res.status, res.stderr).toBe(0)
      const toolchain = (dir: string) => readFileSync(join(dir, 'TOOLCHAIN'), 'utf8').trim().split('\n')
      const [gcc, ld, libc] = toolchain(out)
      const [gcc0, ld0, libc0] = toolchain(NATIVE_DIR)
      if (gcc !== gcc0 || ld !== ld0) {
        ctx.skip(
          `toolchain differs from the committed build's (${gcc0} / ${ld0}): byte identity not expected`,
        )
        return
      }
      // The bare builds and reference output depend on gcc and binutils only.
      const files = WORKLOADS.map((w) => `workloads/${w}-bare`)
      for (const w of WORKLOADS)
        files.push(`workloads/expected/${w}.stdout`, `workloads/expected/${w}.status`)
      // The glibc programs also depend on libc.a.
      if (libc === libc0)
        files.push('regs-oracle', 'sse-oracle', ...WORKLOADS.map((w) => `workloads/${w}-native`))
      const differ = files.filter(
        (f) => !readFileSync(join(out, f)).equals(readFileSync(join(NATIVE_DIR, f))),
      )
      expect(differ).toEqual([])
      if (libc !== libc0)
        console.log(`[workloads] glibc differs (${libc} vs ${libc0}): glibc programs not compared`)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })
})
