// @probekit/x86-emu runs in a browser: the package bundles for the browser
// platform (no Node-only import), and, where Debian's Chromium is installed,
// the bundle runs a workload in headless Chromium and prints exactly what it
// prints under Node.

import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { runBare } from './support/bare.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const CHROMIUM = '/usr/bin/chromium'

async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: [`${here}browser/entry.ts`],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'probekitBrowserTest',
    write: false,
    logLevel: 'silent',
  })
  return result.outputFiles[0].text
}

describe('browser', () => {
  it('bundles for the browser platform with no Node built-ins', async () => {
    const code = await bundle()
    expect(code).toContain('runInBrowser')
    expect(code).not.toMatch(/require\(["']node:/)
  })

  const hasChromium = existsSync(CHROMIUM)
  it.skipIf(!hasChromium)(
    `runs a workload in headless Chromium with the same output as in Node${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed)`}`,
    { timeout: 120_000 },
    async () => {
      const { chromium } = await import('playwright-core')
      const elf = readFileSync(`${here}../native/workloads/intmix-bare`)
      const inNode = runBare(elf)
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      })
      try {
        const page = await browser.newPage()
        await page.addScriptTag({ content: await bundle() })
        const inBrowser = await page.evaluate(
          (bytes) =>
            (
              globalThis as unknown as { probekitBrowserTest: { runInBrowser(e: number[]): unknown } }
            ).probekitBrowserTest.runInBrowser(bytes),
          [...elf],
        )
        expect(inBrowser).toEqual({
          stdout: inNode.stdout,
          exitCode: inNode.exitCode,
          instructions: inNode.instructions,
        })
      } finally {
        await browser.close()
      }
    },
  )
})
