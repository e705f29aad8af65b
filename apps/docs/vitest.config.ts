import { probekitProject } from '../../vitest.shared.js'

// site-dir.ts: one directory per run for the site the browser tests share.
export default probekitProject('docs', { globalSetup: ['test/support/site-dir.ts'] })
