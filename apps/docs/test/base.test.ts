// DOCS_BASE becomes VitePress's base: a path with a slash at each end, and a
// one-line error for anything that is not a path.

import { describe, expect, it } from 'vitest'
import { docsBase } from '../.vitepress/base.js'

describe('docsBase', () => {
  it.each([
    [undefined, '/'],
    ['', '/'],
    ['/', '/'],
    ['/probekit/', '/probekit/'],
    ['/probekit', '/probekit/'],
    ['probekit', '/probekit/'],
    [' /probekit/ ', '/probekit/'],
    ['/docs/v1/', '/docs/v1/'],
  ])('%j gives %j', (value, base) => {
    expect(docsBase(value)).toBe(base)
  })

  it.each(['https://example.org/probekit/', '//cdn/probekit/', '/pro bekit/', '/probekit/?x=1', '/a#b'])(
    'rejects %j with a one-line error',
    (value) => {
      expect(() => docsBase(value)).toThrowError(
        /^DOCS_BASE must be a URL path such as \/probekit\/, got .*$/,
      )
    },
  )
})
