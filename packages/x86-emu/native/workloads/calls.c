// calls: a call-heavy loop, the shape of code a probed kernel runs most (many
// small functions). Each iteration calls a two-instruction function and
// loops: the benchmark's measure of block entry, call/ret and loop overhead
// rather than of arithmetic. Run under the emulator and, in the same bench
// run, under Unicorn (bench/unicorn.py) on the very same bytes.
//
// The iteration count is a volatile global (`iterations`, patched by the
// bench); the native build also takes it from argv[1]. Prints the count and
// the accumulator; exits with its low 7 bits.
#include "platform.h"

#ifndef CALLS_ITERATIONS
#define CALLS_ITERATIONS 1000000
#endif

static volatile u32 iterations = CALLS_ITERATIONS;

// noipa: gcc must neither inline the call nor specialise it away.
__attribute__((noipa)) u64 bump(u64 x) { return x + 0x9e37; }

int main(int argc, char **argv) {
  iterations = plat_iterations(argc, argv, iterations);
  u64 n = iterations;
  u64 acc = 1;
  for (u64 i = 0; i < n; i++) acc = bump(acc);
  out_str("calls iterations=");
  out_udec(n);
  out_char('\n');
  out_kv64("acc", acc);
  out_flush();
  return (int)(acc & 0x7f);
}
