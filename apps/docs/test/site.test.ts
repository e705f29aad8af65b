// The built site works in a browser. The site is built under a non-root base
// (/probekit/, as on GitHub Pages), served the way Pages serves it, and driven
// in Debian's headless Chromium: every page loads without a console error, a
// failed request or a request to another host, the favicon is there, and the
// local search finds an API reference page and navigates to it.

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BASE, builtSite } from './support/built-site.js'
import { type StaticSite, serveStatic } from './support/static-server.js'

const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) console.warn(`site.test.ts: the browser tests are SKIPPED, ${CHROMIUM} is not installed`)

/** The site's pages: its .html files as clean URLs under the base. */
function pagePaths(outDir: string): string[] {
  return readdirSync(outDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.html'))
    .map((f) => f.split('\\').join('/'))
    .sort()
    .map((f) => BASE + f.replace(/(^|\/)index\.html$/, '$1').replace(/\.html$/, ''))
}

/** What went wrong while the browser showed a page. */
interface Problem {
  page: string
  kind: 'console error' | 'page error' | 'failed request' | 'HTTP error' | 'external request'
  detail: string
}

/** A page that reports problems and blocks every request off the site's origin. */
async function watchedPage(
  context: BrowserContext,
  origin: string,
  problems: Problem[],
  current: () => string,
): Promise<Page> {
  const page = await context.newPage()
  await page.route('**/*', (route) => {
    const url = route.request().url()
    if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) {
      return route.continue()
    }
    problems.push({ page: current(), kind: 'external request', detail: url })
    return route.abort('blockedbyclient')
  })
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push({ page: current(), kind: 'console error', detail: msg.text() })
  })
  page.on('pageerror', (error) =>
    problems.push({ page: current(), kind: 'page error', detail: error.message }),
  )
  page.on('requestfailed', (request) => {
    const url = request.url()
    if (!url.startsWith(`${origin}/`)) return // reported as an external request
    // Leaving a page cancels its prefetches; a missing file is an HTTP error instead.
    if (request.failure()?.errorText === 'net::ERR_ABORTED') return
    problems.push({
      page: current(),
      kind: 'failed request',
      detail: `${url}: ${request.failure()?.errorText}`,
    })
  })
  page.on('response', (response) => {
    if (response.status() >= 400) {
      problems.push({ page: current(), kind: 'HTTP error', detail: `${response.status()} ${response.url()}` })
    }
  })
  return page
}

/** Waits until VitePress has mounted (hydrated) the page. */
async function hydrated(page: Page): Promise<void> {
  await page.waitForFunction(
    () => (document.querySelector('#app') as (Element & { __vue_app__?: unknown }) | null)?.__vue_app__,
  )
}

describe(`the site built with base ${BASE}`, () => {
  let outDir = ''
  let site: StaticSite | undefined
  let browser: Browser | undefined

  beforeAll(async () => {
    outDir = await builtSite()
    site = await serveStatic(outDir, BASE)
    if (hasChromium) {
      const { chromium } = await import('playwright-core')
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      })
    }
  }, 1_800_000)

  afterAll(async () => {
    await browser?.close()
    await site?.close()
  })

  it('has the guide, package and API reference pages, all linked under the base', () => {
    const pages = pagePaths(outDir)
    for (const page of ['', 'guide/getting-started', 'packages/', 'api/decoder', 'api/reference/']) {
      expect(pages).toContain(BASE + page)
    }
    // Every package has a reference page.
    for (const dir of ['x86-emu', 'kernel', 'utrace', 'uprobes', 'kprobes', 'optprobes', 'probekit']) {
      expect(pages).toContain(`${BASE}api/reference/${dir}/`)
    }
    const home = readFileSync(join(outDir, 'index.html'), 'utf8')
    expect(home).toContain(`<link rel="icon" type="image/svg+xml" href="${BASE}favicon.svg">`)
    expect(existsSync(join(outDir, 'favicon.svg'))).toBe(true)
    // No root-relative URL escapes the base (the bug a root-only test would not see).
    const rootRelative = [...home.matchAll(/(?:href|src)="(\/[^"]*)"/g)]
      .map((m) => m[1])
      .filter((url) => !url.startsWith(BASE))
    expect(rootRelative).toEqual([])
  })

  it.skipIf(!hasChromium)(
    `loads every page in headless Chromium without console errors, failed or external requests${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed)`}`,
    { timeout: 600_000 },
    async () => {
      if (!browser || !site) throw new Error('the site or the browser did not start')
      const { origin } = site
      const problems: Problem[] = []
      const context = await browser.newContext()
      try {
        const pages = pagePaths(outDir)
        expect(pages.length).toBeGreaterThan(20)
        // Two tabs take turns at the list (the machine has two cores).
        let next = 0
        const tab = async (): Promise<Page> => {
          let current = ''
          const page = await watchedPage(context, origin, problems, () => current)
          while (next < pages.length) {
            current = pages[next++]
            const response = await page.goto(origin + current, { waitUntil: 'load' })
            expect(response?.status(), current).toBe(200)
            await hydrated(page)
          }
          return page
        }
        const [page] = await Promise.all([tab(), tab()])
        const favicon = await page.evaluate(async () => {
          const href = document.querySelector<HTMLLinkElement>('link[rel="icon"]')?.href
          return href ? { href, status: (await fetch(href)).status } : undefined
        })
        expect(favicon).toEqual({ href: `${origin}${BASE}favicon.svg`, status: 200 })
      } finally {
        await context.close()
      }
      expect(problems).toEqual([])
      // Also what the browser fetched outside any page (a favicon.ico, say).
      expect(site.requests.filter((r) => r.status !== 200)).toEqual([])
    },
  )

  it.skipIf(!hasChromium)(
    `finds an API reference page with the local search and navigates to it${hasChromium ? '' : ` (skipped: ${CHROMIUM} is not installed)`}`,
    { timeout: 120_000 },
    async () => {
      if (!browser || !site) throw new Error('the site or the browser did not start')
      const problems: Problem[] = []
      const context = await browser.newContext()
      try {
        const page = await watchedPage(context, site.origin, problems, () => 'search')
        await page.goto(`${site.origin}${BASE}guide/getting-started`)
        await hydrated(page)
        await page.locator('.VPNavBarSearch .DocSearch-Button').click()
        const input = page.locator('#localsearch-input')
        await input.waitFor()
        await input.fill('Kallsyms')
        const target = `${BASE}api/reference/kernel/classes/Kallsyms`
        const result = page.locator(`.VPLocalSearchBox a.result[href^="${target}"]`).first()
        await result.waitFor()
        await result.click()
        await page.waitForURL((url) => url.pathname === target)
        // The URL changes before the new page renders: wait for its heading (a slow machine shows the old one first).
        await page.locator('.vp-doc h1', { hasText: 'Kallsyms' }).first().waitFor({ timeout: 60_000 })
        await expect(page.locator('.VPLocalSearchBox').count()).resolves.toBe(0)
      } finally {
        await context.close()
      }
      expect(problems).toEqual([])
    },
  )
})
