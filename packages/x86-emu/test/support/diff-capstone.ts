// capstone-wasm with the few types these tests need. Its own declarations are
// not reachable through its package "exports" under NodeNext resolution, so the
// module is imported through a non-literal specifier and typed here.

export interface DisassembledInsn {
  address: number | bigint
  size: number
  mnemonic: string
  opStr: string
}

export interface Disassembler {
  /** Decode as much of `bytes` as decodes; [] when the first instruction does not. */
  disasm(bytes: Uint8Array, address: number | bigint): DisassembledInsn[]
  close(): void
}

interface CapstoneModule {
  loadCapstone(): Promise<void>
  Const: { CS_ARCH_X86: number; CS_MODE_64: number }
  Capstone: new (
    arch: number,
    mode: number,
  ) => {
    disasm(data: Uint8Array, options?: { address?: number | bigint }): DisassembledInsn[]
    close(): void
  }
}

const CAPSTONE = 'capstone-wasm'

/** An x86-64 disassembler (capstone, Intel syntax). */
export async function loadDisassembler(): Promise<Disassembler> {
  const cs = (await import(CAPSTONE)) as CapstoneModule
  await cs.loadCapstone()
  const handle = new cs.Capstone(cs.Const.CS_ARCH_X86, cs.Const.CS_MODE_64)
  return {
    disasm(bytes, address) {
      try {
        return handle.disasm(bytes, { address })
      } catch {
        // capstone-wasm throws when nothing decodes
        return []
      }
    },
    close() {
      handle.close()
    },
  }
}
