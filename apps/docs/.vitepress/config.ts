// VitePress configuration. Everything is built offline: local search index,
// no CDN, no web fonts (see theme/index.ts).

import { defineConfig } from 'vitepress'
import { documentedPackages } from './packages.js'

export default defineConfig({
  title: 'probekit',
  description:
    'The Linux dynamic-probing stack (kprobes, jprobes, kretprobes, optprobes, utrace, uprobes) on an emulated x86-64 machine, in TypeScript.',
  cleanUrls: true,
  lang: 'en-US',
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/getting-started' },
      { text: 'Packages', link: '/packages/' },
      { text: 'API', link: '/api/decoder' },
    ],
    sidebar: [
      { text: 'Guide', items: [{ text: 'Getting started', link: '/guide/getting-started' }] },
      {
        text: 'Packages',
        items: [
          { text: 'Overview', link: '/packages/' },
          ...documentedPackages.map((p) => ({ text: p.name, link: `/packages/${p.dir}` })),
        ],
      },
      { text: 'API', items: [{ text: 'Decoder', link: '/api/decoder' }] },
    ],
    search: { provider: 'local' },
    outline: 'deep',
  },
})
