// Property: whatever sequence of register / unregister / enable / disable the
// probes go through (programs running on two vCPUs all along), removing every
// probe leaves kernel text byte-identical to the original.

import { describe, it } from 'vitest'
import { randomProbeProperty } from './support/property.js'

describe('property: register/unregister/enable/disable in random order', () => {
  for (const seed of [1, 2, 3]) {
    it(`removing every probe leaves kernel text byte-identical to the original (seed ${seed})`, () => {
      randomProbeProperty(seed)
    })
  }
})
