// probekit run -p with uprobe_events definitions, end to end: user probes on
// the bundled programs' functions (by symbol and by file offset), their
// return values, fetches of user memory, kernel and user probes in one run,
// and the errors a user should get.

import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PT_LOAD, parseElf, readSymbols } from '@probekit/kernel'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/probekit.js', import.meta.url))
const fixtures = new URL('../../kernel/fixtures/', import.meta.url)
const binDir = fileURLToPath(new URL('bin/', fixtures))
const MYPROG = fileURLToPath(new URL('bin/myprog', fixtures))
const UPROBED = fileURLToPath(new URL('bin/uprobed', fixtures))

function run(args: string[], cwd?: string) {
  const r = spawnSync(process.execPath, [bin, 'run', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 120_000,
    cwd,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A symbol of a fixture: its address, and its file offset through the PT_LOAD that holds it. */
function symbol(path: string, name: string): { vaddr: number; offset: number; size: number } {
  const elf = parseElf(new Uint8Array(readFileSync(path)))
  const sym = readSymbols(elf).find((s) => s.name === name && s.shndx !== 0)
  if (!sym) throw new Error(`${path}: no ${name}`)
  const seg = elf.programHeaders.find(
    (p) => p.type === PT_LOAD && sym.value >= p.vaddr && sym.value < p.vaddr + p.filesz,
  )
  if (!seg) throw new Error(`${name} is in no PT_LOAD`)
  return { vaddr: sym.value, offset: sym.value - seg.vaddr + seg.offset, size: sym.size }
}

const hex = (n: number) => `0x${n.toString(16)}`
/** The ftrace line's task, CPU and timestamp, as traceLine prints them. */
const PREFIX = String.raw`^ +\S+-\d+ +\[\d{3}\] d\.\.\.\. +\d+\.\d{6}: `
const lines = (stderr: string, event: string) => stderr.split('\n').filter((l) => l.includes(` ${event}: (`))
/** A trace without its timestamps (two runs may differ only there). */
const untimed = (stderr: string) => stderr.replace(/ +\d+\.\d{6}: /g, ' T: ')

// myprog calls myfunc(x, y) = x*x + 3y + 1 on these, in this order.
const CALLS = [
  [1, 2],
  [2, 3],
  [5, -1],
  [10, 7],
  [-4, 0],
]
const myprogStdout = () => readFileSync(new URL('expected/myprog.stdout', fixtures), 'utf8')

describe('probekit run -p, uprobes', () => {
  const myfunc = symbol(MYPROG, 'myfunc')

  it('p PATH:SYMBOL: a line per call, (0xVADDR) and the arguments in %di and %si', () => {
    const r = run(['-p', `p ${MYPROG}:myfunc x=%di:s64 y=%si:s64`, '--', MYPROG])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(myprogStdout())
    // Default group uprobes (not shown), event p_<basename>_<symbol>_<offset>.
    const hits = lines(r.stderr, 'p_myprog_myfunc_0')
    expect(hits).toHaveLength(5)
    for (const [i, line] of hits.entries())
      expect(line).toMatch(
        new RegExp(
          `${PREFIX}p_myprog_myfunc_0: \\(${hex(myfunc.vaddr)}\\) x=${CALLS[i][0]} y=${CALLS[i][1]}$`,
        ),
      )
    expect(r.stderr.trim().split('\n')).toHaveLength(5)
    expect(r.stderr).toMatch(/^ +myprog-1 +\[000\] /)
  })

  it('r PATH:SYMBOL with $retval: (0xRET <- 0xFUNC) and each return value', () => {
    const r = run(['-p', `r:myret ${MYPROG}:myfunc ret=$retval:s64`, '--', MYPROG])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(myprogStdout())
    const hits = lines(r.stderr, 'myret')
    expect(hits).toHaveLength(5)
    hits.forEach((line, i) => {
      const [x, y] = CALLS[i]
      expect(line).toMatch(
        new RegExp(`${PREFIX}myret: \\(0x40[0-9a-f]{4} <- ${hex(myfunc.vaddr)}\\) ret=${x * x + 3 * y + 1}$`),
      )
    })
    // One call site in main's loop: one return address.
    expect(new Set(hits.map((l) => /\((0x[0-9a-f]+) <-/.exec(l)?.[1])).size).toBe(1)
  })

  it('PATH:0xOFFSET (the file offset) is the same probe as PATH:SYMBOL; p and r mix', () => {
    const defs = (place: string) => [
      '-p',
      `p:entry ${MYPROG}:${place} x=%di:s64 y=%si:s64 sp=$stack ret=$stack0`,
      '-p',
      `r:exit ${MYPROG}:${place} ret=$retval:s64`,
    ]
    const bySymbol = run([...defs('myfunc'), '--', MYPROG])
    const byOffset = run([...defs(hex(myfunc.offset)), '--', MYPROG])
    expect(myfunc.offset).toBe(myfunc.vaddr - 0x400000)
    expect(bySymbol.code).toBe(0)
    expect(lines(bySymbol.stderr, 'entry')).toHaveLength(5)
    expect(lines(bySymbol.stderr, 'exit')).toHaveLength(5)
    expect(untimed(byOffset.stderr)).toBe(untimed(bySymbol.stderr))
    // An unnamed one is named after the file and the offset, as tracefs names it.
    const unnamed = run(['-p', `p ${MYPROG}:${hex(myfunc.offset)}`, '--', MYPROG])
    expect(lines(unnamed.stderr, `p_myprog_${hex(myfunc.offset)}`)).toHaveLength(5)
  })

  it('a relative PATH is the working directory’s', () => {
    const r = run(['-p', 'p ./myprog:myfunc x=%di:s64', '--', './myprog'], binDir)
    expect(r.code).toBe(0)
    expect(lines(r.stderr, 'p_myprog_myfunc_0').map((l) => l.replace(/.* x=/, ''))).toEqual(
      CALLS.map(([x]) => String(x)),
    )
  })

  it('@+FILE_OFFSET reads a global of the probed file where the process has it', () => {
    // inputs[5][2] (static volatile long, in .data): its file offset is not vaddr - 0x400000.
    const inputs = symbol(MYPROG, 'inputs')
    expect(inputs.offset).not.toBe(inputs.vaddr - 0x400000)
    const r = run([
      '-p',
      `p:g ${MYPROG}:myfunc x0=@+${hex(inputs.offset)}:s64 y2=@+${hex(inputs.offset + 40)}:s64 x3=@${hex(inputs.vaddr + 48)}:s64 ptr=+0(@+${hex(inputs.offset)}):x8`,
      '--',
      MYPROG,
    ])
    expect(r.code).toBe(0)
    const hits = lines(r.stderr, 'g')
    expect(hits).toHaveLength(5)
    // x0 = inputs[0][0], y2 = inputs[2][1], x3 = inputs[3][0] (@ADDR: user memory); 1 is no address.
    for (const line of hits) expect(line).toMatch(/\) x0=1 y2=-1 x3=10 ptr=\(fault\)$/)
  })

  it('string fetches: printf’s format through %di, and a .rodata string by @+FILE_OFFSET', () => {
    const elf = readFileSync(MYPROG)
    const fmt = elf.indexOf('myfunc(%ld, %ld) = %ld\n')
    expect(fmt).toBeGreaterThan(0)
    const r = run([
      '-p',
      `p:pf ${MYPROG}:printf fmt=+0(%di):string`,
      '-p',
      `p:s ${MYPROG}:myfunc s=@+${hex(fmt)}:string c=$comm`,
      '--',
      MYPROG,
    ])
    expect(r.code).toBe(0)
    // The strings end in a newline, printed as it is (as ftrace prints it).
    expect(r.stderr.split('pf: (').length - 1).toBe(6)
    expect(r.stderr.split(') fmt="myfunc(%ld, %ld) = %ld\n"').length - 1).toBe(5)
    expect(r.stderr).toContain(') fmt="calls: %u, sum: %ld\n"')
    expect(r.stderr.split(') s="myfunc(%ld, %ld) = %ld\n" c="myprog"').length - 1).toBe(5)
  })

  it('uprobed recurse 5: entries 5..1 of ufact, then returns 1, 2, 6, 24, 120 (uretprobes nest)', () => {
    const ufact = symbol(UPROBED, 'ufact')
    const r = run([
      '-p',
      `p ${UPROBED}:ufact n=%di:s64`,
      '-p',
      `r ${UPROBED}:ufact ret=$retval:s64`,
      '--',
      UPROBED,
      'recurse',
      '5',
    ])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('ufact(5) = 120\n')
    const all = r.stderr
      .replace(/\n$/, '')
      .split('\n')
      .map((l) => l.replace(new RegExp(PREFIX), ''))
    expect(all.slice(0, 5)).toEqual(
      [5, 4, 3, 2, 1].map((n) => `p_uprobed_ufact_0: (${hex(ufact.vaddr)}) n=${n}`),
    )
    const rets = all
      .slice(5)
      .map((l) => /^r_uprobed_ufact_0: \((0x[0-9a-f]+) <- (0x[0-9a-f]+)\) ret=(-?\d+)$/.exec(l))
    expect(rets.map((m) => m?.[3])).toEqual(['1', '2', '6', '24', '120'])
    expect(rets.map((m) => m?.[2])).toEqual(Array(5).fill(hex(ufact.vaddr)))
    // The first four return into ufact itself (after its recursive call), the last into main.
    const sites = rets.map((m) => Number(m?.[1]))
    expect(new Set(sites.slice(0, 4)).size).toBe(1)
    expect(sites[0]).toBeGreaterThan(ufact.vaddr)
    expect(sites[0]).toBeLessThan(ufact.vaddr + ufact.size)
    expect(sites[4]).not.toBe(sites[0])
  })

  it('kernel and user probes in one run: the five myfunc hits, then do_group_exit', () => {
    const r = run([
      '-p',
      `p:myfunc ${MYPROG}:myfunc x=%di:s64`,
      '-p',
      'p:exit do_group_exit code=%di:s32 comm=$comm',
      '--',
      MYPROG,
    ])
    expect(r.code).toBe(0)
    const all = r.stderr.replace(/\n$/, '').split('\n')
    expect(all).toHaveLength(6)
    expect(
      all.slice(0, 5).every((l) => new RegExp(`${PREFIX}myfunc: \\(${hex(myfunc.vaddr)}\\) x=`).test(l)),
    ).toBe(true)
    expect(all[5]).toMatch(
      new RegExp(`${PREFIX}exit: \\(do_group_exit\\+0x0/0x[0-9a-f]+\\) code=0 comm="myprog"$`),
    )
  })

  it('--trace gets the uprobe lines', () => {
    const trace = join(mkdtempSync(join(tmpdir(), 'probekit-uprobes-')), 'trace.txt')
    const r = run(['-p', `p ${MYPROG}:myfunc`, '--trace', trace, '--', MYPROG])
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 0,
      stdout: myprogStdout(),
      stderr: '',
    })
    expect(readFileSync(trace, 'utf8').trim().split('\n')).toHaveLength(5)
  })
})

describe('probekit run -p, uprobe errors: one line, exit 2, nothing run', () => {
  const hello = fileURLToPath(new URL('bin/hello', fixtures))
  const oneLine = (r: ReturnType<typeof run>, message: string | RegExp) => {
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.split('\n')).toHaveLength(2)
    if (typeof message === 'string') expect(r.stderr).toBe(`probekit: ${message}\n`)
    else expect(r.stderr).toMatch(message)
  }

  it('no such file', () =>
    oneLine(
      run(['-p', 'p /no/such/prog:0x1000', '--', hello]),
      'cannot place probe p_prog_0x1000 at /no/such/prog:0x1000: /no/such/prog: no such file',
    ))

  it('a directory; a file that is not ELF', () => {
    oneLine(run(['-p', `p ${binDir}:0x1000`, '--', hello]), /: not a regular file\n$/)
    oneLine(
      run(['-p', `p ${fileURLToPath(new URL('myprog.c', fixtures))}:0x10`, '--', hello]),
      /myprog\.c: not an ELF file \(bad magic\)\n$/,
    )
  })

  it('an offset outside the executable segments', () =>
    oneLine(
      run(['-p', `p ${MYPROG}:0x10`, '--', hello]),
      `cannot place probe p_myprog_0x10 at ${MYPROG}:0x10: file offset 0x10 is not in an executable segment of ${MYPROG} (its code is at file offsets 0x1000-0x4c17)`,
    ))

  it('an unknown symbol; a data symbol', () => {
    oneLine(
      run(['-p', `p ${MYPROG}:no_such_function`, '--', hello]),
      `cannot place probe p_myprog_no_such_function_0 at ${MYPROG}:no_such_function: no symbol 'no_such_function' in ${MYPROG} (.symtab or .dynsym)`,
    )
    oneLine(
      run(['-p', `p ${MYPROG}:inputs`, '--', hello]),
      /'inputs' is data \(an object\), not a function\n$/,
    )
  })

  it('$retval on an entry probe; a kernel symbol in a uprobe; MAXACTIVE on a uprobe; a missing offset', () => {
    const def = `p ${MYPROG}:myfunc x=$retval`
    oneLine(
      run(['-p', def, '--', hello]),
      `bad probe definition '${def}': $retval is not available on probe (column ${def.indexOf('$') + 1})`,
    )
    oneLine(run(['-p', `p ${MYPROG}:myfunc x=@jiffies`, '--', hello]), /Symbol is not available with uprobe/)
    oneLine(run(['-p', `r4 ${MYPROG}:myfunc`, '--', hello]), /MAXACTIVE is only for kernel return probes/)
    oneLine(run(['-p', `p ${MYPROG}`, '--', hello]), /a uprobe is PATH:OFFSET or PATH:SYMBOL\[\+OFFS\]/)
  })

  it('a probe that cannot be placed leaves no trace file', () => {
    const trace = join(mkdtempSync(join(tmpdir(), 'probekit-uprobes-')), 'never.txt')
    oneLine(run(['-p', `p ${MYPROG}:nosuch`, '--trace', trace, '--', hello]), /no symbol 'nosuch'/)
    expect(existsSync(trace)).toBe(false)
  })

  it('two events of one name (EEXIST), across kernel and user probes of one group', () =>
    oneLine(
      run(['-p', `p:g/e ${MYPROG}:myfunc`, '-p', 'p:g/e do_fork', '--', hello]),
      "-p 'p:g/e do_fork': event g/e already exists (EEXIST)",
    ))
})
