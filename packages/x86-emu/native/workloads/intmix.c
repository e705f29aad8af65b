// intmix: an integer-heavy workload for the emulator (bare build) and the host
// CPU (native build). Checksums (table-driven CRC-32, Adler-32, FNV-1a),
// sorting (quicksort with an insertion-sort cutoff, on 32-bit unsigned and
// 64-bit signed values), an open-addressing hash table (insert, look up,
// delete with tombstones), and 64-bit multiply/shift/rotate/divide mixing.
//
// Parameterised by an iteration count: INTMIX_ITERATIONS at build time, kept
// in a volatile global so the compiler cannot fold the work away; the native
// build also takes it from argv[1]. Prints one line per phase and the final
// checksums; exits with the low 7 bits of the final checksum.
#include "platform.h"

#ifndef INTMIX_ITERATIONS
#define INTMIX_ITERATIONS 2
#endif

#define N32 3000
#define N64 2000
#define BUF_LEN 8192
#define HT_BITS 12
#define HT_SIZE (1u << HT_BITS)
#define HT_KEYS 2500

static volatile u32 iterations = INTMIX_ITERATIONS;
static volatile u64 seed0 = 0x9e3779b97f4a7c15ull;

static u64 rng_state;

static u64 next64(void) {
  // xorshift64* (Vigna)
  u64 x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545f4914f6cdd1dull;
}

static u64 rotl64(u64 x, unsigned r) { return (x << (r & 63)) | (x >> ((64 - r) & 63)); }

// ---- checksums ---------------------------------------------------------------

static u32 crc_table[256];

static void crc32_init(void) {
  for (u32 i = 0; i < 256; i++) {
    u32 c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    crc_table[i] = c;
  }
}

static u32 crc32(const u8 *p, usize n) {
  u32 c = 0xffffffffu;
  for (usize i = 0; i < n; i++) c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

static u32 adler32(const u8 *p, usize n) {
  u32 a = 1, b = 0;
  for (usize i = 0; i < n; i++) {
    a = (a + p[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

static u32 fnv1a32(const u8 *p, usize n) {
  u32 h = 0x811c9dc5u;
  for (usize i = 0; i < n; i++) h = (h ^ p[i]) * 0x01000193u;
  return h;
}

static u64 fnv1a64(const u8 *p, usize n) {
  u64 h = 0xcbf29ce484222325ull;
  for (usize i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// ---- sorting -----------------------------------------------------------------

static void isort_u32(u32 *a, long lo, long hi) {
  for (long i = lo + 1; i <= hi; i++) {
    u32 v = a[i];
    long j = i - 1;
    while (j >= lo && a[j] > v) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
}

static void qsort_u32(u32 *a, long lo, long hi) {
  while (hi - lo > 16) {
    long mid = lo + (hi - lo) / 2;
    // median of three into a[mid]
    if (a[mid] < a[lo]) { u32 t = a[mid]; a[mid] = a[lo]; a[lo] = t; }
    if (a[hi] < a[lo]) { u32 t = a[hi]; a[hi] = a[lo]; a[lo] = t; }
    if (a[hi] < a[mid]) { u32 t = a[hi]; a[hi] = a[mid]; a[mid] = t; }
    u32 pivot = a[mid];
    long i = lo, j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        u32 t = a[i]; a[i] = a[j]; a[j] = t;
        i++;
        j--;
      }
    }
    // recurse into the smaller half, loop on the larger
    if (j - lo < hi - i) {
      qsort_u32(a, lo, j);
      lo = i;
    } else {
      qsort_u32(a, i, hi);
      hi = j;
    }
  }
  isort_u32(a, lo, hi);
}

static void isort_i64(i64 *a, long n) {
  for (long i = 1; i < n; i++) {
    i64 v = a[i];
    long j = i - 1;
    while (j >= 0 && a[j] > v) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = v;
  }
}

static void qsort_i64(i64 *a, long n) {
  if (n <= 12) {
    isort_i64(a, n);
    return;
  }
  i64 pivot = a[n / 2];
  long i = 0, j = n - 1;
  for (;;) {
    while (a[i] < pivot) i++;
    while (a[j] > pivot) j--;
    if (i >= j) break;
    i64 t = a[i]; a[i] = a[j]; a[j] = t;
    i++;
    j--;
  }
  qsort_i64(a, j + 1);
  qsort_i64(a + j + 1, n - j - 1);
}

// ---- open-addressing hash table (linear probing, tombstones) ----------------

#define HT_EMPTY 0ull
#define HT_TOMB 1ull

static u64 ht_key[HT_SIZE];
static u32 ht_val[HT_SIZE];

static u32 ht_hash(u64 k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return (u32)k & (HT_SIZE - 1);
}

static int ht_put(u64 k, u32 v) {
  u32 i = ht_hash(k), tomb = HT_SIZE;
  for (u32 n = 0; n < HT_SIZE; n++, i = (i + 1) & (HT_SIZE - 1)) {
    if (ht_key[i] == k) {
      ht_val[i] += v;
      return 0;
    }
    if (ht_key[i] == HT_TOMB && tomb == HT_SIZE) tomb = i;
    if (ht_key[i] == HT_EMPTY) {
      if (tomb != HT_SIZE) i = tomb;
      ht_key[i] = k;
      ht_val[i] = v;
      return 1;
    }
  }
  if (tomb == HT_SIZE) return -1;
  ht_key[tomb] = k;
  ht_val[tomb] = v;
  return 1;
}

static u32 *ht_get(u64 k) {
  u32 i = ht_hash(k);
  for (u32 n = 0; n < HT_SIZE; n++, i = (i + 1) & (HT_SIZE - 1)) {
    if (ht_key[i] == k) return &ht_val[i];
    if (ht_key[i] == HT_EMPTY) return 0;
  }
  return 0;
}

static int ht_del(u64 k) {
  u32 i = ht_hash(k);
  for (u32 n = 0; n < HT_SIZE; n++, i = (i + 1) & (HT_SIZE - 1)) {
    if (ht_key[i] == k) {
      ht_key[i] = HT_TOMB;
      return 1;
    }
    if (ht_key[i] == HT_EMPTY) return 0;
  }
  return 0;
}

// ---- mixing ------------------------------------------------------------------

static u64 mix64(u64 acc, u64 x) {
  unsigned __int128 p = (unsigned __int128)(acc ^ x) * 0x9fb21c651e98df25ull;
  u64 lo = (u64)p, hi = (u64)(p >> 64);
  acc = rotl64(lo ^ hi, (unsigned)(x & 63)) + (x >> 7);
  i64 s = (i64)acc >> (x & 31);
  acc ^= (u64)s;
  u64 d = (x | 1) & 0xffffffffffull;
  acc += acc / d + acc % 1000003u;
  i64 sq = (i64)(acc ^ x);
  i64 sd = (i64)((x & 0xffff) | 1) * ((x & 0x10000) ? -1 : 1);
  acc ^= (u64)(sq / sd) ^ (u64)(sq % sd);
  return acc;
}

static u8 buf[BUF_LEN];
static u32 a32[N32];
static i64 a64[N64];
static u64 keys[HT_KEYS];

int main(int argc, char **argv) {
  u32 iters = iterations;
#ifndef PLATFORM_BARE
  if (argc > 1) {
    iters = 0;
    for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++) iters = iters * 10 + (u32)(*p - '0');
  }
#else
  (void)argc;
  (void)argv;
#endif
  crc32_init();
  u64 total = 0;
  for (u32 it = 0; it < iters; it++) {
    rng_state = seed0 + it * 0x632be59bd9b4e019ull;

    // checksums over a pseudo-random buffer with some structure
    for (usize i = 0; i < BUF_LEN; i += 8) {
      u64 r = next64();
      if ((i & 0x3ff) == 0) r &= 0x00ff00ff00ff00ffull;
      for (int k = 0; k < 8; k++) buf[i + k] = (u8)(r >> (k * 8));
    }
    u32 c = crc32(buf, BUF_LEN), ad = adler32(buf, BUF_LEN), f32 = fnv1a32(buf, BUF_LEN);
    u64 f64 = fnv1a64(buf, BUF_LEN);

    // sorting
    for (int i = 0; i < N32; i++) a32[i] = (u32)(next64() >> (i % 7 == 0 ? 60 : 32));
    for (int i = 0; i < N64; i++) a64[i] = (i64)next64() >> (i % 5);
    qsort_u32(a32, 0, N32 - 1);
    qsort_i64(a64, N64);
    u32 bad = 0;
    for (int i = 1; i < N32; i++) bad += a32[i - 1] > a32[i];
    for (int i = 1; i < N64; i++) bad += a64[i - 1] > a64[i];
    u32 sc32 = crc32((const u8 *)a32, sizeof a32);
    u64 sc64 = fnv1a64((const u8 *)a64, sizeof a64);

    // hash table
    for (u32 i = 0; i < HT_SIZE; i++) ht_key[i] = HT_EMPTY;
    u32 inserted = 0, found = 0, missing = 0, deleted = 0;
    u64 vsum = 0;
    for (int i = 0; i < HT_KEYS; i++) {
      keys[i] = (next64() % 1800) * 0x10001ull + 2;  // duplicates on purpose
      inserted += ht_put(keys[i], (u32)i) == 1;
    }
    for (int i = 0; i < HT_KEYS; i += 3) deleted += ht_del(keys[i]);
    for (int i = 0; i < HT_KEYS; i++) {
      u32 *v = ht_get(keys[i]);
      if (v) {
        found++;
        vsum += *v;
      }
      if (!ht_get(keys[i] + 0x10001)) missing++;
    }

    // mixing
    u64 m = 0x0123456789abcdefull;
    for (int i = 0; i < 2000; i++) m = mix64(m, next64());

    out_str("iter ");
    out_udec(it);
    out_char('\n');
    out_kv64("  crc32", c);
    out_kv64("  adler32", ad);
    out_kv64("  fnv1a32", f32);
    out_kv64("  fnv1a64", f64);
    out_kv64("  sort32", sc32);
    out_kv64("  sort64", sc64);
    out_str("  unsorted=");
    out_udec(bad);
    out_str(" min32=");
    out_udec(a32[0]);
    out_str(" max64=");
    out_sdec(a64[N64 - 1]);
    out_char('\n');
    out_str("  ht inserted=");
    out_udec(inserted);
    out_str(" deleted=");
    out_udec(deleted);
    out_str(" found=");
    out_udec(found);
    out_str(" missing=");
    out_udec(missing);
    out_char('\n');
    out_kv64("  htsum", vsum);
    out_kv64("  mix", m);
    out_flush();

    total = mix64(total, c ^ ((u64)ad << 32));
    total = mix64(total, f32 ^ f64);
    total = mix64(total, sc32 ^ sc64);
    total = mix64(total, vsum ^ ((u64)found << 40) ^ ((u64)missing << 20) ^ inserted ^ deleted);
    total = mix64(total, m + bad);
  }
  out_kv64("total", total);
  out_flush();
  return (int)(total & 0x7f);
}
