// capstone-wasm (capstone 5), the design card's disassembler, for the text
// of `probekit disasm`'s lines: mnemonic and operands as objdump users read
// them. Where instructions start stays the engine decoder's call.

/** The part of capstone-wasm's API used here (see node_modules/capstone-wasm/dist/index.d.ts). */
interface CapstoneModule {
  loadCapstone(): Promise<void>
  Const: { CS_ARCH_X86: number; CS_MODE_64: number }
  Capstone: new (
    arch: number,
    mode: number,
  ) => {
    disasm(
      data: Uint8Array,
      options?: { address?: number | bigint; count?: number },
    ): { size: number; mnemonic: string; opStr: string }[]
    close(): void
  }
}

/**
 * capstone-wasm, imported on first use: only `probekit disasm` needs it, not every command's
 * start-up. A dynamic import, so the docs playground's bundle (a browser) has it too. The CLI's
 * bundle (bin/bundle.js) leaves it out, as its script finds its .wasm file next to itself.
 */
let capstoneModule: Promise<CapstoneModule> | null = null
function capstone(): Promise<CapstoneModule> {
  // @ts-expect-error capstone-wasm's package.json "exports" has no "types" condition, so NodeNext cannot see its typings.
  capstoneModule ??= import('capstone-wasm') as Promise<CapstoneModule>
  return capstoneModule
}

export interface CapstoneText {
  size: number
  mnemonic: string
  opStr: string
}

/** One instruction's text, or null when capstone rejects the bytes. */
export type CapstoneOne = (bytes: Uint8Array, address: number) => CapstoneText | null

/** Load the wasm module (once per process) and open an x86-64 handle. */
export async function openCapstone(): Promise<{ one: CapstoneOne; close(): void }> {
  const { Capstone, Const, loadCapstone } = await capstone()
  await loadCapstone()
  const cs = new Capstone(Const.CS_ARCH_X86, Const.CS_MODE_64)
  return {
    one(bytes, address) {
      try {
        // capstone-wasm wants a non-negative address; kernel addresses are negative linear numbers.
        const r = cs.disasm(bytes, { address: BigInt.asUintN(64, BigInt(address)), count: 1 })
        return r.length > 0 ? { size: r[0].size, mnemonic: r[0].mnemonic, opStr: r[0].opStr } : null
      } catch {
        return null
      }
    },
    close() {
      cs.close()
    },
  }
}
