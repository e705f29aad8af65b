// The live playground works in a real browser: the site is built into a
// temporary directory under the base GitHub Pages gives it (/probekit/) and
// served on a localhost port, and headless Chromium (Debian's, through
// playwright-core) opens the playground page and runs the default example,
// the uprobe example, an int3 probe with jump optimization off, and a bad
// definition. What the page shows is checked against what the rest of the
// repository says independently: the program's output against the native
// Linux run recorded in packages/kernel/fixtures/expected, the trace lines
// and the one-line error against `probekit run` with the same definitions,
// and the listings against themselves (the detour buffer holds copies of the
// instructions the jump replaced) and against `probekit disasm`. No console error, no failed request, and
// no request leaves localhost.

import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BASE, builtSite } from './support/built-site.js'
import { type StaticSite, serveStatic } from './support/static-server.js'

const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) console.warn(`playground.test.ts: SKIPPED, ${CHROMIUM} is not installed`)

const repo = fileURLToPath(new URL('../../../', import.meta.url))
const fixtures = join(repo, 'packages/kernel/fixtures')
const probekit = join(repo, 'packages/cli/bin/probekit.js')

/** The CLI's environment: no colour, whatever the CI machine sets. */
const plainEnv: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' }
delete plainEnv.FORCE_COLOR

/** `probekit run` with these definitions: its trace lines (stderr) and exit status. */
function cliRun(definitions: string[], program: string, args: string[] = []) {
  const r = spawnSync(
    process.execPath,
    [
      probekit,
      'run',
      '--isolated',
      '--cpus',
      '1',
      '--memory',
      '64M',
      ...definitions.flatMap((d) => ['-p', d]),
      '--',
      join(fixtures, 'bin', program),
      ...args,
    ],
    { encoding: 'utf8', cwd: repo, env: plainEnv },
  )
  return { stderr: r.stderr, status: r.status }
}

/** An ftrace line without its timestamp (guest cycles, which the program's environment shifts). */
const untimed = (line: string) => line.replace(/ +\d+\.\d{6}: /, ' ')
/** A listing line's columns: address, <+offset>, bytes, instruction, note. */
const fields = (line: string) => line.trim().split(/\s{2,}/)
/** Click Run and wait for the run to end (the button is disabled while the worker runs). */
async function run(page: Page) {
  await page.locator('.pg-run').click()
  await page.locator('.pg-run:not([disabled])').waitFor({ timeout: 300_000 })
}

/**
 * The page's first listing is `probekit disasm TARGET`'s, but for the int3 over the function's first
 * instruction (where the probes are), whose note names the probes and the instruction it covers.
 */
async function expectInt3Listing(page: Page, target: string, note: (insn: string) => string) {
  const shown = (await page.locator('.pg-listing').first().locator('.pg-line').allTextContents()).map(fields)
  const disasm = spawnSync(process.execPath, [probekit, 'disasm', target], {
    encoding: 'utf8',
    env: plainEnv,
  })
  expect(disasm.status).toBe(0)
  const rows = disasm.stdout.split('\n').slice(1, -1).map(fields)
  expect(shown.length).toBe(rows.length)
  expect(shown.findIndex((f) => f[3] === 'int3')).toBe(0)
  expect(shown.slice(1)).toEqual(rows.slice(1))
  const [address, offset, bytes, , text] = shown[0]
  expect([address, offset]).toEqual(rows[0].slice(0, 2))
  expect(bytes).toBe(`cc${rows[0][2].slice(2)}`)
  expect(text).toBe(note(rows[0][3]))
}
const traceLines = (text: string) => text.split('\n').filter((l) => /^\s+\S+-\d+\s+\[\d{3}\]/.test(l))

describe.skipIf(!hasChromium)('the live playground in headless Chromium', { timeout: 1_800_000 }, () => {
  let site: StaticSite | undefined

  beforeAll(async () => {
    const outDir = await builtSite()
    site = await serveStatic(outDir, BASE)
  }, 1_800_000)

  afterAll(async () => {
    await site?.close()
  })

  it('runs the examples, shows their output, trace lines and probed code, and the one-line error', async () => {
    const { chromium } = await import('playwright-core')
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    })
    const origin = site!.origin
    const errors: string[] = []
    const failed: string[] = []
    const outside: string[] = []
    try {
      const context = await browser.newContext()
      // Every request, the worker's included: one that would leave localhost is refused and recorded.
      await context.route('**/*', (route) => {
        const url = new URL(route.request().url())
        if (url.origin === origin || url.protocol === 'data:' || url.protocol === 'blob:')
          return route.continue()
        outside.push(url.href)
        return route.abort()
      })
      context.on('requestfailed', (r) => failed.push(`${r.failure()?.errorText} ${r.url()}`))
      context.on('weberror', (e) => errors.push(e.error().message))
      const page = await context.newPage()
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text())
      })
      page.on('worker', (w) =>
        w.on('console', (m) => m.type() === 'error' && errors.push(`worker: ${m.text()}`)),
      )
      await page.goto(`${origin}${BASE}playground`)

      // 1. The default example: the kprobe and kretprobe on do_sys_open while fileio opens files.
      const definitions = (await page.locator('.pg-definitions').inputValue())
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('#'))
      expect(definitions[0]).toMatch(/^p:myprobe do_sys_open /)
      await run(page)
      expect(await page.locator('.pg-error').count()).toBe(0)
      expect(await page.locator('.pg-status').textContent()).toMatch(/^exit status 0 /)
      // The program's output is the native Linux run's (its args: a directory to work in).
      expect(await page.locator('.pg-stdout').textContent()).toBe(
        readFileSync(join(fixtures, 'expected/fileio.stdout'), 'utf8'),
      )
      expect(await page.locator('.pg-stderr').textContent()).toBe(
        readFileSync(join(fixtures, 'expected/fileio.stderr'), 'utf8'),
      )
      // The trace lines are probekit run's for the same definitions, event for event.
      const trace = traceLines((await page.locator('.pg-trace').textContent()) ?? '')
      expect(trace[0]).toMatch(
        /^\s+fileio-1\s+\[000\] d\.\.\.\.\s+\d+\.\d{6}: myprobe: \(do_sys_open\+0x0\/0x[0-9a-f]+\) dfd=-100 filename="/,
      )
      const cli = cliRun(definitions, 'fileio', ['/tmp'])
      expect(cli.status).toBe(0)
      expect(trace.map(untimed)).toEqual(traceLines(cli.stderr).map(untimed))

      // The probed code: do_sys_open's entry is a jump now, to a detour buffer holding copies of the
      // instructions the jump replaced.
      const jump = page.locator('.pg-mark-jump')
      expect(await jump.count()).toBe(1)
      expect(await jump.textContent()).toMatch(/ e9( [0-9a-f]{2}){4} +jmp 0x[0-9a-f]+ <detour buffer>/)
      const text = (s: string | null) => (s ?? '').trim().split(/\s{2,}/)[3]
      const replaced = (await page.locator('.pg-mark-replaced').allTextContents()).map(text)
      const copied = (await page.locator('.pg-mark-copied').allTextContents()).map(text)
      expect(replaced.length).toBeGreaterThan(0)
      expect(copied).toEqual(replaced)

      // 2. A uprobe and a uretprobe on myprog's myfunc: x, y and the results, and the int3 in the listing.
      await page.locator('.pg-example').selectOption({ index: 1 })
      expect(await page.locator('.pg-program').inputValue()).toBe('myprog')
      await run(page)
      expect(await page.locator('.pg-stdout').textContent()).toBe(
        readFileSync(join(fixtures, 'expected/myprog.stdout'), 'utf8'),
      )
      const utrace = traceLines((await page.locator('.pg-trace').textContent()) ?? '')
      expect(utrace[0]).toMatch(/ myfunc_entry: \(0x[0-9a-f]+\) x=1 y=2$/)
      expect(utrace[1]).toMatch(/ myfunc_return: \(0x[0-9a-f]+ <- 0x[0-9a-f]+\) ret=8$/)
      await expectInt3Listing(
        page,
        `${fixtures}/bin/myprog:myfunc`,
        (insn) =>
          `uprobe myfunc_entry, uretprobe myfunc_return: an int3 over ${insn} in each process's copy of the page`,
      )

      // 3. An int3 probe (jump optimization off) on do_group_exit while hello exits: the listing is
      // probekit disasm's, but for the int3 over the probed instruction's first byte.
      await page.locator('.pg-example').selectOption({ index: 3 })
      await page.locator('.pg-optimize').uncheck()
      await run(page)
      expect(await page.locator('.pg-stdout').textContent()).toBe(
        readFileSync(join(fixtures, 'expected/hello.stdout'), 'utf8'),
      )
      expect(traceLines((await page.locator('.pg-trace').textContent()) ?? '')).toEqual([
        expect.stringMatching(
          /^\s+hello-1\s+\[000\] d\.\.\.\.\s+\d+\.\d{6}: myexit: \(do_group_exit\+0x0\/0x[0-9a-f]+\) exit_code=0x0$/,
        ),
      ])
      expect(await page.locator('.pg-mark-jump, .pg-mark-replaced, .pg-mark-detour').count()).toBe(0)
      await expectInt3Listing(
        page,
        'do_group_exit',
        (insn) => `kprobe myexit: an int3 over ${insn}; not optimized: debug.kprobes_optimization=0`,
      )

      // 4. A probe point inside an instruction: the CLI's one-line error, and nothing else shown.
      const bad = 'p:bad do_sys_open+4'
      await page.locator('.pg-definitions').fill(bad)
      await run(page)
      const message = (await page.locator('.pg-error').textContent()) ?? ''
      expect(message).not.toContain('\n')
      expect(`probekit: ${message}\n`).toBe(cliRun([bad], 'myprog').stderr)
      expect(await page.locator('.pg-status').count()).toBe(0)
    } finally {
      await browser.close()
    }
    expect(errors).toEqual([])
    expect(failed).toEqual([])
    expect(site!.requests.filter((r) => r.status !== 200)).toEqual([])
    expect(outside).toEqual([])
  })
})
