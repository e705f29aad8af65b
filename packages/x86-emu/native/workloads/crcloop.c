// crcloop: a compute loop. Each iteration refills a 64 KiB buffer from
// xorshift64, then runs a table-driven CRC-32 over it: loads, shifts, xors and
// a table lookup per byte, in one hot block each. Run under the emulator and,
// in the same bench run, under Unicorn (bench/unicorn.py) on the same bytes.
//
// The iteration count is a volatile global (`iterations`, patched by the
// bench); the native build also takes it from argv[1]. Prints the CRC of each
// iteration's buffer folded together; exits with its low 7 bits.
#include "platform.h"

#ifndef CRCLOOP_ITERATIONS
#define CRCLOOP_ITERATIONS 4
#endif

#define BUF_LEN 65536

static volatile u32 iterations = CRCLOOP_ITERATIONS;
static u32 crc_table[256];
static u64 buf[BUF_LEN / 8];

int main(int argc, char **argv) {
  iterations = plat_iterations(argc, argv, iterations);
  for (u32 i = 0; i < 256; i++) {
    u32 c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
  u64 state = 0x9e3779b97f4a7c15ull;
  u32 fold = 0;
  u32 n = iterations;
  for (u32 it = 0; it < n; it++) {
    for (usize j = 0; j < BUF_LEN / 8; j++) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      buf[j] = state;
    }
    const u8 *p = (const u8 *)buf;
    u32 c = 0xffffffffu;
    for (usize j = 0; j < BUF_LEN; j++) c = crc_table[(c ^ p[j]) & 0xff] ^ (c >> 8);
    fold = (fold << 5 | fold >> 27) ^ ~c;
  }
  out_str("crcloop iterations=");
  out_udec(n);
  out_char('\n');
  out_kv64("crc", fold);
  out_flush();
  return (int)(fold & 0x7f);
}
