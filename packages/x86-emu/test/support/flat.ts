// Run a short instruction sequence at CPL 3 on a fresh machine: the
// emulator side of the differential tests.

import {
  AddressSpace,
  CR0_NE,
  CR4_OSFXSR,
  CR4_OSXMMEXCPT,
  EFER_LMA,
  EFER_NXE,
  EFER_SCE,
  IF,
  Machine,
  USER_CS,
  USER_SS,
  Vector,
} from '../../src/index.js'

export const FLAT_CODE_ADDRESS = 0x10000000n
export const FLAT_DATA_ADDRESS = 0x20000000n
const CODE = Number(FLAT_CODE_ADDRESS)
const DATA = Number(FLAT_DATA_ADDRESS)

export interface FlatCase {
  code: Uint8Array
  /** rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15 */
  gpr: bigint[]
  rflags: bigint
  /** 4096 bytes at FLAT_DATA_ADDRESS. */
  data: Uint8Array
  /** XMM0-XMM15 as 256 bytes (little-endian, register n at 16n); zeros when absent. */
  xmm?: Uint8Array
  /** Initial MXCSR (default 0x1f80). */
  mxcsr?: number
  /** CR0.NE and CR4.OSFXSR/OSXMMEXCPT as Linux sets them: unmasked FP exceptions raise #MF / #XM. */
  linuxFpu?: boolean
  /** Run at CPL 0 instead of 3 (privileged instructions). */
  kernel?: boolean
}

export interface FlatOutcome {
  gpr: bigint[]
  rflags: bigint
  data: Uint8Array
  rip: bigint
  fault: null | { vector: number; errorCode: number }
  /** XMM0-XMM15 at the end, 256 bytes. */
  xmm: Uint8Array
  mxcsr: number
}

/** `jitThreshold` 0 runs the sequence through the block compiler, Infinity through the interpreter only. */
export function runFlat(
  c: FlatCase,
  maxInstructions = 1_000_000,
  jitThreshold = Number.POSITIVE_INFINITY,
): FlatOutcome {
  if (c.code.length > 8192 - 16) throw new Error('flat code too long')
  const m = new Machine({ memorySize: 8 * 1024 * 1024, jitThreshold })
  const space = new AddressSpace(m.memory, m.frames)
  // Two code pages padded with int3: reaching the end of the sequence traps at end+1.
  const code = new Uint8Array(8192).fill(0xcc)
  code.set(c.code)
  for (let p = 0; p < 2; p++) {
    const f = m.frames.alloc()
    m.memory.writeBytes(f * 4096, code.subarray(p * 4096, (p + 1) * 4096))
    space.map(CODE + p * 4096, f, { user: true, writable: false })
  }
  const df = m.frames.alloc()
  m.memory.writeBytes(df * 4096, c.data)
  space.map(DATA, df, { user: true, writable: true, nx: true })

  const cpu = m.cpus[0]
  cpu.efer = EFER_LMA | EFER_NXE | EFER_SCE
  cpu.setCr3(space.root)
  cpu.setCpl(c.kernel ? 0 : 3)
  cpu.cs = USER_CS
  cpu.ss = USER_SS
  for (let i = 0; i < 16; i++) cpu.setReg(i, c.gpr[i])
  cpu.rflags = Number(c.rflags) | IF
  if (c.xmm) new Uint8Array(cpu.xmm.buffer, cpu.xmm.byteOffset, 256).set(c.xmm)
  if (c.mxcsr !== undefined) cpu.mxcsr = c.mxcsr
  if (c.linuxFpu) {
    cpu.cr0 |= CR0_NE
    cpu.cr4 |= CR4_OSFXSR | CR4_OSXMMEXCPT
  }
  cpu.rip = CODE
  const end = CODE + c.code.length

  let fault: FlatOutcome['fault'] = null
  m.trapHandler = (cpu, ev) => {
    if (ev.vector === Vector.BP && ev.kind === 'trap' && cpu.rip === end + 1) {
      cpu.rip = end
      return 'stop'
    }
    fault = { vector: ev.vector, errorCode: ev.errorCode }
    return 'stop'
  }
  const result = m.run({ maxInstructions })
  if (result.reason === 'budget') throw new Error(`flat case ran away: ${result.detail}`)
  const gpr: bigint[] = []
  for (let i = 0; i < 16; i++) gpr.push(cpu.getReg(i))
  return {
    gpr,
    rflags: BigInt(cpu.rflags >>> 0),
    data: m.memory.readBytes(df * 4096, 4096),
    rip: BigInt.asUintN(64, BigInt(cpu.rip)),
    fault,
    xmm: new Uint8Array(cpu.xmm.buffer, cpu.xmm.byteOffset, 256).slice(),
    mxcsr: cpu.mxcsr >>> 0,
  }
}
