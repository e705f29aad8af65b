import { defineConfig } from 'vitest/config'

// One vitest project per package; each package's own vitest.config.ts is picked up.
export default defineConfig({
  test: { projects: ['packages/*', 'apps/*'] },
})
