// What the docs site's Vite needs for the playground: the workspace packages
// from their TypeScript sources (the '@probekit/source' export condition, as
// the tests resolve them), and in the worker's bundle the stand-ins for the
// few Node modules the CLI's probe placement imports (node-shims.ts).

import type { UserConfig } from 'vitepress'
import { NODE_SHIMS } from './node-shims.js'

const PREFIX = '\0probekit-node-shim:'

export const playgroundVite: NonNullable<UserConfig['vite']> = {
  resolve: { conditions: ['@probekit/source'] },
  worker: {
    format: 'es',
    plugins: () => [
      {
        name: 'probekit-playground-node-shims',
        enforce: 'pre',
        resolveId: (id: string) => (id in NODE_SHIMS ? PREFIX + id : null),
        load: (id: string) => (id.startsWith(PREFIX) ? NODE_SHIMS[id.slice(PREFIX.length)] : null),
      },
    ],
  },
}
