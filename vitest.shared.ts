import { defaultClientConditions, defaultServerConditions } from 'vite'
import { defineProject, type UserWorkspaceConfig } from 'vitest/config'

// Workspace packages resolve each other's TypeScript sources through the
// '@probekit/source' export condition, so tests never need a build first.
export function probekitProject(name: string, extra: UserWorkspaceConfig['test'] = {}): UserWorkspaceConfig {
  return defineProject({
    resolve: { conditions: ['@probekit/source', ...defaultClientConditions] },
    ssr: { resolve: { conditions: ['@probekit/source', ...defaultServerConditions] } },
    test: { name, include: ['test/**/*.test.ts'], testTimeout: 60_000, ...extra },
  })
}
