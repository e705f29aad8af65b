// Architectural register numbers and bits, in the SDM's names.

export const RAX = 0
export const RCX = 1
export const RDX = 2
export const RBX = 3
export const RSP = 4
export const RBP = 5
export const RSI = 6
export const RDI = 7
export const R8 = 8
export const R9 = 9
export const R10 = 10
export const R11 = 11
export const R12 = 12
export const R13 = 13
export const R14 = 14
export const R15 = 15

export const GPR_NAMES = [
  'rax',
  'rcx',
  'rdx',
  'rbx',
  'rsp',
  'rbp',
  'rsi',
  'rdi',
  'r8',
  'r9',
  'r10',
  'r11',
  'r12',
  'r13',
  'r14',
  'r15',
] as const
export type GprName = (typeof GPR_NAMES)[number]

// RFLAGS
export const CF = 1 << 0
export const PF = 1 << 2
export const AF = 1 << 4
export const ZF = 1 << 6
export const SF = 1 << 7
export const TF = 1 << 8
export const IF = 1 << 9
export const DF = 1 << 10
export const OF = 1 << 11
export const IOPL = 3 << 12
export const NT = 1 << 14
export const RF = 1 << 16
export const VM = 1 << 17
export const AC = 1 << 18
export const VIF = 1 << 19
export const VIP = 1 << 20
export const ID = 1 << 21
/** The six status flags computed by arithmetic. */
export const ARITH_FLAGS = CF | PF | AF | ZF | SF | OF
/** Bit 1 of RFLAGS always reads as 1. */
export const RFLAGS_FIXED = 1 << 1
/** Bits software may change with popf at CPL 0 (VM/VIF/VIP are left alone in long mode). */
export const RFLAGS_WRITABLE = ARITH_FLAGS | TF | IF | DF | IOPL | NT | RF | AC | ID

// CR0 / CR4 / EFER
export const CR0_PE = 1 << 0
export const CR0_NE = 1 << 5
export const CR0_WP = 1 << 16
export const CR0_PG = 1 << 31
export const CR4_PAE = 1 << 5
export const CR4_PGE = 1 << 7
export const CR4_OSFXSR = 1 << 9
export const CR4_OSXMMEXCPT = 1 << 10
export const EFER_SCE = 1 << 0
export const EFER_LME = 1 << 8
export const EFER_LMA = 1 << 10
export const EFER_NXE = 1 << 11

// MSRs
export const MSR_EFER = 0xc0000080
export const MSR_STAR = 0xc0000081
export const MSR_LSTAR = 0xc0000082
export const MSR_CSTAR = 0xc0000083
export const MSR_FMASK = 0xc0000084
export const MSR_FS_BASE = 0xc0000100
export const MSR_GS_BASE = 0xc0000101
export const MSR_KERNEL_GS_BASE = 0xc0000102
export const MSR_TSC_AUX = 0xc0000103
export const MSR_TSC = 0x10

// DR6 / DR7
export const DR6_B0 = 1 << 0
export const DR6_BS = 1 << 14
/** DR6 reads with bits 4-11 and 16-31 set (the architectural "reserved as 1" pattern). */
export const DR6_FIXED = 0xffff0ff0
export const DR7_GD = 1 << 13

/** Flat long-mode selectors, laid out as Linux does (GDT: kernel CS 0x10, kernel SS 0x18, user SS 0x2b, user CS 0x33). */
export const KERNEL_CS = 0x10
export const KERNEL_SS = 0x18
export const USER_SS = 0x2b
export const USER_CS = 0x33
