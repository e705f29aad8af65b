// probekit disasm: a function's listing. A kernel function's lines follow
// the engine decoder's instruction boundaries over the image's bytes and
// end at the symbol's end; branch targets are named from the symbol table;
// a user program's function lists the bytes of the file; -p marks the
// probed instruction and still shows the original bytes; --optimize shows
// the jump to the detour buffer and the buffer, whose last jmp returns
// past the replaced bytes; bad targets are one-line errors, exit 2.

import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type ElfFile, parseElf, readSymbols } from '@probekit/kernel'
import { tryDecode } from '@probekit/x86-emu'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const VMLINUX = fileURLToPath(new URL('../../kernel/guest/vmlinux', import.meta.url))
const MYPROG = fileURLToPath(new URL('../../kernel/fixtures/bin/myprog', import.meta.url))
const PACKAGE_JSON = fileURLToPath(new URL('../package.json', import.meta.url))

function disasm(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, 'disasm', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 60_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

interface Line {
  address: bigint
  bytes: number[]
  text: string
  notes: string
}

/** A listing's lines as address, bytes, text and notes (the columns are two or more blanks apart). */
function parse(listing: string): Line[] {
  return listing
    .split('\n')
    .filter((l) => /^[0-9a-f]{8,16} {2}<\+\d+>/.test(l))
    .map((l) => {
      const [address, , bytes, text, notes = ''] = l.split(/ {2,}/)
      return {
        address: BigInt(`0x${address}`),
        bytes: bytes.split(' ').map((b) => parseInt(b, 16)),
        text,
        notes,
      }
    })
}

/** The file bytes of [vaddr, vaddr+size) through the PT_LOAD segment holding them. */
function fileBytes(elf: ElfFile, vaddr: number, size: number): Uint8Array {
  const seg = elf.programHeaders.find(
    (p) => p.type === 1 && vaddr >= p.vaddr && vaddr + size <= p.vaddr + p.filesz,
  )
  if (!seg) throw new Error(`no segment holds ${vaddr.toString(16)}`)
  const off = seg.offset + vaddr - seg.vaddr
  return elf.bytes.subarray(off, off + size)
}

const u64 = (n: number) => BigInt.asUintN(64, BigInt(n))

const vmlinux = parseElf(new Uint8Array(readFileSync(VMLINUX)))
const kernelSymbols = readSymbols(vmlinux)
const kernelFunction = (name: string) => {
  const s = kernelSymbols.find((x) => x.name === name && x.type === 2)
  if (!s) throw new Error(`vmlinux has no function ${name}`)
  return s
}

describe('probekit disasm', () => {
  it("a kernel function: the decoder's instructions over the image's bytes, to the symbol's end, targets named", () => {
    const fn = kernelFunction('do_sys_openat2')
    const r = disasm('do_sys_openat2')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const lines = parse(r.stdout)
    const bytes = fileBytes(vmlinux, fn.value, fn.size)
    let at = 0
    for (const line of lines) {
      expect(line.address).toBe(u64(fn.value + at))
      const insn = tryDecode(bytes.subarray(at), fn.value + at)
      if (insn instanceof Error) throw insn
      expect(line.bytes).toEqual([...bytes.subarray(at, at + insn.length)])
      if (insn.branchTarget !== null) {
        // Inside the function: <fn+0xoff>; a call: the callee's own symbol.
        const t = insn.branchTarget
        const callee = kernelSymbols.find((s) => s.type === 2 && s.value === t)
        const name =
          t > fn.value && t < fn.value + fn.size
            ? `do_sys_openat2+0x${(t - fn.value).toString(16)}`
            : (callee?.name ?? '?')
        expect(line.text).toBe(`${line.text.split(' <')[0]} <${name}>`)
        expect(line.text).toContain(`0x${u64(t).toString(16)}`)
      } else expect(line.text).not.toContain('<')
      at += insn.length
    }
    expect(at).toBe(fn.size)
    expect(lines.filter((l) => / <(build_open_flags|getname|do_filp_open)>$/.test(l.text))).toHaveLength(3)
    expect(lines.some((l) => /^j[a-z]+ 0x[0-9a-f]+ <do_sys_openat2\+0x[0-9a-f]+>$/.test(l.text))).toBe(true)
  })

  it('an ADDRESS inside a function lists the whole function, the same as its name', () => {
    const fn = kernelFunction('do_fork')
    const byName = disasm('do_fork')
    const byAddress = disasm(`0x${u64(fn.value + 4).toString(16)}`)
    expect(byAddress.code).toBe(0)
    expect(byAddress.stdout).toBe(byName.stdout)
    expect(parse(byName.stdout)[0].address).toBe(u64(fn.value))
  })

  it("a user program's function (BINARY:SYMBOL) lists the file's bytes at the symbol's addresses", () => {
    const elf = parseElf(new Uint8Array(readFileSync(MYPROG)))
    const fn = readSymbols(elf).find((s) => s.name === 'myfunc' && s.type === 2)
    if (!fn) throw new Error('myprog has no myfunc')
    const r = disasm(`${MYPROG}:myfunc`)
    expect(r.code).toBe(0)
    const lines = parse(r.stdout)
    expect(lines[0].address).toBe(BigInt(fn.value))
    lines.forEach((l, i) => {
      const next = i + 1 < lines.length ? lines[i + 1].address : BigInt(fn.value + fn.size)
      expect(l.address + BigInt(l.bytes.length)).toBe(next)
    })
    expect(lines.flatMap((l) => l.bytes)).toEqual([...fileBytes(elf, fn.value, fn.size)])
    expect(lines.at(-1)?.text).toBe('ret')
  })

  it('-p marks the probed instruction and lists the original bytes, not the int3', () => {
    const fn = kernelFunction('do_sys_open')
    const plain = parse(disasm('do_sys_open').stdout)
    const r = disasm('-p', 'p:myprobe do_sys_open+6', 'do_sys_open')
    expect(r.code).toBe(0)
    const probed = parse(r.stdout)
    expect(probed.map((l) => l.bytes)).toEqual(plain.map((l) => l.bytes))
    expect(probed.map((l) => l.text)).toEqual(plain.map((l) => l.text))
    const marked = probed.filter((l) => l.notes !== '')
    expect(marked).toHaveLength(1)
    expect(marked[0].address).toBe(u64(fn.value + 6))
    expect(marked[0].notes).toBe('[kprobe myprobe]')
  })

  it('--optimize shows the jmp to the detour buffer over the replaced instructions, and the buffer', () => {
    const fn = kernelFunction('do_sys_open')
    // +18: `and ecx, 0xfff; and eax, ...` after the flags test (a test is not boostable, so not at +6).
    const r = disasm('-p', 'p:myprobe do_sys_open+18', '--optimize', 'do_sys_open')
    expect(r.code).toBe(0)
    const [text, buffer] = r.stdout.split('\ndetour buffer of kprobe myprobe at ')
    expect(buffer).toBeDefined()
    const lines = parse(text)
    const jump = lines.find((l) => l.notes === '[optimized kprobe myprobe]')
    expect(jump?.address).toBe(u64(fn.value + 18))
    expect(jump?.bytes[0]).toBe(0xe9)
    expect(jump?.bytes).toHaveLength(5)
    const bufferAddress = /^0x([0-9a-f]+),/.exec(buffer)?.[1]
    expect(jump?.text).toBe(`jmp 0x${bufferAddress} <detour buffer>`)
    // The instructions the jump covers, marked; the first of them where the jump is.
    const replaced = lines.filter((l) => l.notes === '[replaced by the jump]')
    expect(replaced[0].address).toBe(u64(fn.value + 18))
    const replacedEnd = replaced.at(-1)!.address + BigInt(replaced.at(-1)!.bytes.length)
    expect(replacedEnd - u64(fn.value + 18)).toBeGreaterThanOrEqual(5n)
    // The buffer ends with the copies of those instructions and a jmp back past them.
    const buf = parse(buffer)
    expect(buf[0].address).toBe(BigInt(`0x${bufferAddress}`))
    const back = buf.at(-1)!
    expect(back.text).toBe(
      `jmp 0x${replacedEnd.toString(16)} <do_sys_open+0x${(replacedEnd - u64(fn.value)).toString(16)}>`,
    )
    const copies = buf.slice(-1 - replaced.length, -1)
    expect(copies.map((l) => l.bytes)).toEqual(replaced.map((l) => l.bytes))
  })

  it('--optimize says why a probe stays an int3 probe (a call there: its return address would be in the buffer)', () => {
    const fn = kernelFunction('do_sys_open')
    // do_sys_open's one call (to do_sys_openat2), wherever gcc put it.
    const call = parse(disasm('do_sys_open').stdout).find((l) => l.text.startsWith('call '))!
    const offset = Number(call.address - u64(fn.value))
    const r = disasm('-p', `p:oncall do_sys_open+${offset}`, '--optimize', 'do_sys_open')
    expect(r.code).toBe(0)
    expect(r.stdout).not.toContain('detour buffer')
    const marked = parse(r.stdout).filter((l) => l.notes !== '')
    expect(marked).toHaveLength(1)
    expect(marked[0].address).toBe(u64(fn.value + offset))
    expect(marked[0].text).toMatch(/^call /)
    expect(marked[0].notes).toMatch(/^\[kprobe oncall, not optimized: .*call/)
  })

  it('bad targets are one-line errors with exit 2', () => {
    for (const args of [
      ['no_such_function'],
      ['0x1234'],
      [`${PACKAGE_JSON}:main`],
      [`${MYPROG}:no_such_function`],
      ['/no/such/file:main'],
      ['-p', `p ${MYPROG}:myfunc`, 'do_sys_open'],
      ['--optimize', 'do_sys_open'],
    ]) {
      const r = disasm(...args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^probekit: [^\n]+\n$/)
    }
  })
})
