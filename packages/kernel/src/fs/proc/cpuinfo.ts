// /proc/cpuinfo (arch/x86/kernel/cpu/proc.c show_cpuinfo): a block a vCPU,
// every value read from that CPU's cpuid as identify_cpu reads it: vendor,
// family/model/stepping (with the extended fields), the brand string, the
// APIC id, the address sizes, and the flags - the names Linux gives the
// feature bits that are set (cpufeatures.h), in its word order. The clock
// is the virtual one rdtsc counts, 1 GHz (cpu MHz 1000.000, and bogomips
// twice that, as a TSC-calibrated delay loop gives).

import { type Cpu, cpuid } from '@probekit/x86-emu'

/** x86_cap_flags: names of the bits of each cpuid register, in Linux's word order. */
const WORDS: { leaf: number; reg: number; names: Record<number, string> }[] = [
  {
    leaf: 1,
    reg: 3, // word 0: CPUID 1 EDX
    names: {
      0: 'fpu',
      1: 'vme',
      2: 'de',
      3: 'pse',
      4: 'tsc',
      5: 'msr',
      6: 'pae',
      7: 'mce',
      8: 'cx8',
      9: 'apic',
      11: 'sep',
      12: 'mtrr',
      13: 'pge',
      14: 'mca',
      15: 'cmov',
      16: 'pat',
      17: 'pse36',
      18: 'pn',
      19: 'clflush',
      21: 'dts',
      22: 'acpi',
      23: 'mmx',
      24: 'fxsr',
      25: 'sse',
      26: 'sse2',
      27: 'ss',
      28: 'ht',
      29: 'tm',
      30: 'ia64',
      31: 'pbe',
    },
  },
  {
    leaf: 0x80000001,
    reg: 3, // word 1: CPUID 0x80000001 EDX
    names: {
      11: 'syscall',
      19: 'mp',
      20: 'nx',
      22: 'mmxext',
      25: 'fxsr_opt',
      26: 'pdpe1gb',
      27: 'rdtscp',
      29: 'lm',
      30: '3dnowext',
      31: '3dnow',
    },
  },
  {
    leaf: 1,
    reg: 2, // word 4: CPUID 1 ECX
    names: {
      0: 'pni',
      1: 'pclmulqdq',
      2: 'dtes64',
      3: 'monitor',
      4: 'ds_cpl',
      5: 'vmx',
      6: 'smx',
      7: 'est',
      8: 'tm2',
      9: 'ssse3',
      10: 'cid',
      11: 'sdbg',
      12: 'fma',
      13: 'cx16',
      14: 'xtpr',
      15: 'pdcm',
      17: 'pcid',
      18: 'dca',
      19: 'sse4_1',
      20: 'sse4_2',
      21: 'x2apic',
      22: 'movbe',
      23: 'popcnt',
      24: 'tsc_deadline_timer',
      25: 'aes',
      26: 'xsave',
      28: 'avx',
      29: 'f16c',
      30: 'rdrand',
      31: 'hypervisor',
    },
  },
  {
    leaf: 0x80000001,
    reg: 2, // word 6: CPUID 0x80000001 ECX
    names: {
      0: 'lahf_lm',
      1: 'cmp_legacy',
      2: 'svm',
      3: 'extapic',
      4: 'cr8_legacy',
      5: 'abm',
      6: 'sse4a',
      7: 'misalignsse',
      8: '3dnowprefetch',
      9: 'osvw',
      10: 'ibs',
      11: 'xop',
      12: 'skinit',
      13: 'wdt',
      15: 'lwp',
      16: 'fma4',
      17: 'tce',
      19: 'nodeid_msr',
      21: 'tbm',
      22: 'topoext',
      23: 'perfctr_core',
      24: 'perfctr_nb',
      26: 'bpext',
      27: 'ptsc',
      28: 'perfctr_llc',
      29: 'mwaitx',
    },
  },
]

/** The four bytes of a register, as cpuid's strings store them. */
function chars(...regs: number[]): string {
  return regs
    .map((r) => String.fromCharCode(r & 0xff, (r >>> 8) & 0xff, (r >>> 16) & 0xff, r >>> 24))
    .join('')
}

/** The flags line's names: each named bit that is set, word by word. */
export function cpuFlags(cpu: Cpu): string[] {
  const out: string[] = []
  for (const w of WORDS) {
    const value = cpuid(cpu, w.leaf, 0)[w.reg]
    for (let b = 0; b < 32; b++) if ((value >>> b) & 1 && w.names[b]) out.push(w.names[b])
  }
  return out
}

function showCpu(cpu: Cpu, count: number): string {
  const [level, vb, vc, vd] = cpuid(cpu, 0, 0)
  const [sig, misc] = cpuid(cpu, 1, 0)
  let family = (sig >>> 8) & 0xf
  if (family === 0xf) family += (sig >>> 20) & 0xff
  let model = (sig >>> 4) & 0xf
  if (family >= 6) model += ((sig >>> 16) & 0xf) << 4
  const maxExt = cpuid(cpu, 0x80000000, 0)[0] >>> 0
  const brand =
    maxExt >= 0x80000004
      ? chars(...[0x80000002, 0x80000003, 0x80000004].flatMap((l) => cpuid(cpu, l, 0)))
          .replace(/\0.*$/s, '')
          .trim()
      : ''
  // Without leaf 0x80000008, get_cpu_address_sizes' defaults: 36 bits physical, 48 virtual.
  const sizes = maxExt >= 0x80000008 ? cpuid(cpu, 0x80000008, 0)[0] : 0x3024
  const apicid = misc >>> 24
  const clflush = ((misc >>> 8) & 0xff) * 8
  const flags = cpuFlags(cpu)
  return [
    `processor\t: ${cpu.id}`,
    `vendor_id\t: ${chars(vb, vd, vc)}`,
    `cpu family\t: ${family}`,
    `model\t\t: ${model}`,
    `model name\t: ${brand || 'unknown'}`,
    `stepping\t: ${sig & 0xf}`,
    'cpu MHz\t\t: 1000.000',
    'physical id\t: 0',
    `siblings\t: ${count}`,
    `core id\t\t: ${cpu.id}`,
    `cpu cores\t: ${count}`,
    `apicid\t\t: ${apicid}`,
    `initial apicid\t: ${apicid}`,
    `fpu\t\t: ${flags.includes('fpu') ? 'yes' : 'no'}`,
    `fpu_exception\t: ${flags.includes('fpu') ? 'yes' : 'no'}`,
    `cpuid level\t: ${level}`,
    'wp\t\t: yes',
    `flags\t\t:${flags.map((f) => ` ${f}`).join('')}`,
    'bugs\t\t:',
    'bogomips\t: 2000.00',
    `clflush size\t: ${clflush}`,
    `cache_alignment\t: ${clflush}`,
    `address sizes\t: ${sizes & 0xff} bits physical, ${(sizes >>> 8) & 0xff} bits virtual`,
    'power management:',
    '',
    '',
  ].join('\n')
}

export function showCpuinfo(cpus: readonly Cpu[]): string {
  return cpus.map((c) => showCpu(c, cpus.length)).join('')
}
