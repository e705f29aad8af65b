// A software TLB: direct-mapped, one per CPU. The slot is the page number
// folded with its upper bits ((vpn ^ vpn >> 10) & mask), so user pages and the
// kernel half do not all land on the same slots.
//
// Each entry caches one virtual page's frame and which accesses the last
// page walk allowed, per privilege: a hit costs two typed-array loads and a
// compare. Write permission is only cached once the page is dirty and holds
// no decoded code, so those writes take the slow path that sets D and
// invalidates code.

export const TLB_SIZE = 4096
export const TLB_MASK = TLB_SIZE - 1

// Permission bits of an entry.
export const TLB_R_SUP = 1 << 0
export const TLB_W_SUP = 1 << 1
export const TLB_X_SUP = 1 << 2
export const TLB_R_USER = 1 << 3
export const TLB_W_USER = 1 << 4
export const TLB_X_USER = 1 << 5
export const TLB_W_ANY = TLB_W_SUP | TLB_W_USER

export class Tlb {
  /** Virtual page number (linear number / 4096, floored) per slot; NaN = empty. */
  readonly vpn = new Float64Array(TLB_SIZE).fill(Number.NaN)
  /** Physical address of the page's frame. */
  readonly phys = new Int32Array(TLB_SIZE)
  readonly bits = new Uint8Array(TLB_SIZE)
  /** Global pages survive CR3 writes. */
  readonly global = new Uint8Array(TLB_SIZE)
  /**
   * Bumped by every change to an entry (fill, flush, revoked write): compiled
   * code that cached a translation uses it only while this is unchanged.
   */
  gen = 0

  /** Fill slot i (the caller computed it from vpn). */
  fill(i: number, vpn: number, phys: number, bits: number, global: boolean): void {
    this.gen++
    this.vpn[i] = vpn
    this.phys[i] = phys
    this.bits[i] = bits
    this.global[i] = global ? 1 : 0
  }

  flushAll(keepGlobal: boolean): void {
    this.gen++
    for (let i = 0; i < TLB_SIZE; i++) {
      if (keepGlobal && this.global[i] !== 0) continue
      this.vpn[i] = Number.NaN
      this.bits[i] = 0
    }
  }

  flushPage(vpn: number): void {
    const i = (vpn ^ (vpn >> 10)) & TLB_MASK
    if (this.vpn[i] === vpn) {
      this.gen++
      this.vpn[i] = Number.NaN
      this.bits[i] = 0
    }
  }

  /** Stop caching write access to a frame (it now holds decoded code). */
  revokeWrite(frame: number): void {
    const base = frame * 4096
    this.gen++
    for (let i = 0; i < TLB_SIZE; i++) if (this.phys[i] === base) this.bits[i] &= ~TLB_W_ANY
  }
}
