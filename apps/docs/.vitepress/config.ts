// VitePress configuration. Everything is built offline: local search index,
// no CDN, no web fonts (see theme/index.ts).

import { defineConfig } from 'vitepress'
import { playgroundVite } from '../playground/vite-config.js'
import { API_REFERENCE_DIR, generateApiReference } from './api-reference.js'
import { docsBase } from './base.js'
import { documentedPackages } from './packages.js'

const base = docsBase(process.env.DOCS_BASE)
const apiReference = await generateApiReference()

export default defineConfig({
  title: 'probekit',
  description:
    'The Linux dynamic-probing stack (kprobes, jprobes, kretprobes, optprobes, utrace, uprobes) on an emulated x86-64 machine, in TypeScript.',
  cleanUrls: true,
  lang: 'en-US',
  base,
  // VitePress does not prefix head links with the base.
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: `${base}favicon.svg` }]],
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'Packages', link: '/packages/' },
      {
        text: 'API',
        items: [
          { text: 'Decoder', link: '/api/decoder' },
          { text: 'Reference', link: `/${API_REFERENCE_DIR}/` },
        ],
      },
      { text: 'Playground', link: '/playground' },
    ],
    sidebar: [
      {
        text: 'Guide',
        items: [
          { text: 'Getting started', link: '/guide/getting-started' },
          { text: 'Kprobes, jprobes, kretprobes', link: '/guide/kprobes' },
          { text: 'Jump optimization', link: '/guide/optprobes' },
          { text: 'Uprobes', link: '/guide/uprobes' },
          { text: 'Utrace and --strace', link: '/guide/utrace' },
          { text: 'Playground', link: '/playground' },
        ],
      },
      {
        text: 'Packages',
        items: [
          { text: 'Overview', link: '/packages/' },
          ...documentedPackages.map((p) => ({ text: p.name, link: `/packages/${p.dir}` })),
        ],
      },
      {
        text: 'API',
        items: [
          { text: 'Decoder', link: '/api/decoder' },
          {
            text: 'Reference',
            link: `/${API_REFERENCE_DIR}/`,
            collapsed: true,
            items: apiReference.sidebar,
          },
        ],
      },
    ],
    search: { provider: 'local' },
    outline: 'deep',
  },
  vite: playgroundVite,
})
