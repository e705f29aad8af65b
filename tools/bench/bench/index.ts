// The harness's own noise floor: what measure() reports for (almost) no work.
// Read other packages' per-call numbers against these.

import { measure, report, runBenchmarks } from '@probekit/bench'

let sink = 0

report(
  await runBenchmarks([
    {
      name: 'bench: empty call (timer floor)',
      unit: 'ns/call',
      run: () => measure(() => {}, { iterations: 100_000 }) * 1e6,
    },
    {
      name: 'bench: 1k-element integer loop',
      unit: 'ns/call',
      run: () =>
        measure(
          () => {
            for (let i = 0; i < 1000; i++) sink = (sink + i) | 0
          },
          { iterations: 1000 },
        ) * 1e6,
    },
  ]),
)
