// selfcheck: a small fixture that checks itself. Each check computes a value
// two independent ways (e.g. a hardware divide against shift-and-subtract, a
// __int128 multiply-high against a 32-bit schoolbook product, a bit scan
// against a loop) and prints "ok" or "FAIL" with the value; the exit status
// is the number of failed checks. The native and bare builds must print the
// same text, and natively every check passes.
//
// Exercises: div/idiv (32/64, signed/unsigned, by constants = multiply-high
// magic, by variables), mul/imul high halves via __int128, bsf/bsr/tzcnt via
// __builtin_ctzll/clzll, dense switch statements (jump tables), recursion
// (Ackermann, mutual recursion, recursive fib), and string instructions: gcc's
// inline memcpy/memset expansion (built with -mmemcpy-strategy=rep_byte and
// -mmemset-strategy=rep_8byte, so rep movsb / rep stosq) and hand-written
// repne scasb, repe cmpsb, std; rep movsb.
#include "platform.h"

static volatile u64 seed = 0xd1b54a32d192ed03ull;
static u64 state;
static u32 failures;

static u64 rnd(void) {
  // splitmix64
  u64 z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static u64 edge(void) {
  static const u64 edges[] = {0, 1, 2, 3, 7, 0x7f, 0x80, 0xff, 0x7fffffff, 0x80000000u, 0xffffffffu,
                              0x100000000ull, 0x7fffffffffffffffull, 0x8000000000000000ull,
                              0xffffffffffffffffull, 0xfffffffffffffffeull};
  u64 r = rnd();
  if ((r & 3) == 0) return edges[(r >> 8) % (sizeof edges / sizeof edges[0])];
  if ((r & 3) == 1) return rnd() >> (r >> 10 & 63);
  return rnd();
}

static void check(const char *name, u64 got, u64 want) {
  out_str(got == want ? "ok   " : "FAIL ");
  out_str(name);
  out_str(" 0x");
  out_hex(got, 16);
  if (got != want) {
    out_str(" want 0x");
    out_hex(want, 16);
    failures++;
  }
  out_char('\n');
  out_flush();  // one line per write: a run that goes wrong shows how far it got
}

// ---- division ------------------------------------------------------------------

// Unsigned 64/64 by shift-and-subtract (no div instruction).
__attribute__((noinline)) static u64 slow_udiv(u64 n, u64 d, u64 *rem) {
  u64 q = 0, r = 0;
  for (int i = 63; i >= 0; i--) {
    r = (r << 1) | ((n >> i) & 1);
    if (r >= d) {
      r -= d;
      q |= 1ull << i;
    }
  }
  *rem = r;
  return q;
}

__attribute__((noinline)) static u64 hw_udiv(u64 n, u64 d, u64 *rem) {
  *rem = n % d;
  return n / d;
}

__attribute__((noinline)) static i64 hw_sdiv(i64 n, i64 d, i64 *rem) {
  *rem = n % d;
  return n / d;
}

__attribute__((noinline)) static u32 hw_udiv32(u32 n, u32 d) { return n / d + n % d; }
__attribute__((noinline)) static i32 hw_sdiv32(i32 n, i32 d) { return n / d * 3 + n % d; }

static void check_division(void) {
  u64 acc_fast = 0, acc_slow = 0;
  for (int i = 0; i < 400; i++) {
    u64 n = edge(), d = edge();
    if (d == 0) d = 7;
    u64 r1, r2;
    u64 q1 = hw_udiv(n, d, &r1), q2 = slow_udiv(n, d, &r2);
    acc_fast = acc_fast * 31 + q1 + (r1 << 1);
    acc_slow = acc_slow * 31 + q2 + (r2 << 1);
  }
  check("udiv64 vs shift-subtract", acc_fast, acc_slow);

  u64 sacc = 0, sref = 0;
  for (int i = 0; i < 400; i++) {
    i64 n = (i64)edge(), d = (i64)edge();
    if (d == 0 || (d == -1 && n == (i64)0x8000000000000000ull)) d = 3;
    i64 r;
    i64 q = hw_sdiv(n, d, &r);
    // reference: divide magnitudes, then fix signs (truncation toward zero)
    u64 an = n < 0 ? 0 - (u64)n : (u64)n, ad = d < 0 ? 0 - (u64)d : (u64)d, ur;
    u64 uq = slow_udiv(an, ad, &ur);
    i64 rq = (n < 0) != (d < 0) ? (i64)(0 - uq) : (i64)uq;
    i64 rr = n < 0 ? (i64)(0 - ur) : (i64)ur;
    sacc = sacc * 37 + (u64)q + ((u64)r << 3);
    sref = sref * 37 + (u64)rq + ((u64)rr << 3);
  }
  check("idiv64 vs magnitude division", sacc, sref);

  // division by constants: gcc emits multiply-high "magic" sequences
  u64 cacc = 0, cref = 0;
  for (int i = 0; i < 300; i++) {
    u64 n = edge();
    u32 n32 = (u32)n;
    i64 sn = (i64)n;
    cacc += n / 10 + n % 10 + n / 1000000007ull + n32 / 3 + n32 % 7 + (u64)(sn / 9) + (u64)(sn % 13);
    u64 r;
    cref += slow_udiv(n, 10, &r) + r;
    cref += slow_udiv(n, 1000000007ull, &r);
    cref += slow_udiv(n32, 3, &r);
    slow_udiv(n32, 7, &r);
    cref += r;
    i64 rr;
    cref += (u64)hw_sdiv(sn, 9, &rr);
    hw_sdiv(sn, 13, &rr);
    cref += (u64)rr;
  }
  check("division by constants", cacc, cref);

  u64 a32 = 0;
  for (int i = 0; i < 200; i++) {
    u32 n = (u32)edge(), d = (u32)edge() | 1;
    i32 sn = (i32)n, sd = (i32)d;
    if (sd == -1) sd = 5;
    a32 = a32 * 3 + hw_udiv32(n, d) + (u64)(u32)hw_sdiv32(sn, sd);
  }
  out_str("     div32 mix 0x");
  out_hex(a32, 16);
  out_char('\n');
}

// ---- multiply high -------------------------------------------------------------

static u64 mulhi_schoolbook(u64 a, u64 b) {
  u64 al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
  u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  u64 mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

__attribute__((noinline)) static u64 mulhi_u(u64 a, u64 b) { return (u64)(((unsigned __int128)a * b) >> 64); }
__attribute__((noinline)) static i64 mulhi_s(i64 a, i64 b) { return (i64)(((__int128)a * b) >> 64); }

static void check_mulhi(void) {
  u64 x = 0, y = 0, sx = 0, sy = 0, lo = 0, lref = 0;
  for (int i = 0; i < 500; i++) {
    u64 a = edge(), b = edge();
    x = x * 7 + mulhi_u(a, b);
    y = y * 7 + mulhi_schoolbook(a, b);
    // signed high half = unsigned high half - (a<0 ? b : 0) - (b<0 ? a : 0)
    u64 s = mulhi_schoolbook(a, b) - ((i64)a < 0 ? b : 0) - ((i64)b < 0 ? a : 0);
    sx = sx * 5 + (u64)mulhi_s((i64)a, (i64)b);
    sy = sy * 5 + s;
    lo += a * b;
    lref += (a & 0xffffffffu) * (b & 0xffffffffu) + (((a >> 32) * b + (b >> 32) * (a & 0xffffffffu)) << 32);
  }
  check("mulhi unsigned vs schoolbook", x, y);
  check("mulhi signed vs corrected", sx, sy);
  check("mul low vs schoolbook", lo, lref);
}

// ---- bit scans -----------------------------------------------------------------

static int ctz_loop(u64 v) {
  int n = 0;
  while (!(v & 1)) {
    v >>= 1;
    n++;
  }
  return n;
}

static int clz_loop(u64 v) {
  int n = 0;
  while (!(v >> 63)) {
    v <<= 1;
    n++;
  }
  return n;
}

__attribute__((noinline)) static int hw_ctz(u64 v) { return __builtin_ctzll(v); }
__attribute__((noinline)) static int hw_clz(u64 v) { return __builtin_clzll(v); }
__attribute__((noinline)) static int hw_ctz32(u32 v) { return __builtin_ctz(v); }
__attribute__((noinline)) static int hw_clz32(u32 v) { return __builtin_clz(v); }
__attribute__((noinline)) static int hw_popcount(u64 v) { return __builtin_popcountll(v); }
__attribute__((noinline)) static int hw_parity(u64 v) { return __builtin_parityll(v); }

static void check_bitscan(void) {
  u64 a = 0, b = 0, c = 0, d = 0, p = 0, pr = 0;
  for (int i = 0; i < 600; i++) {
    u64 v = edge();
    if (v == 0) v = 0x40;
    a = a * 67 + (u64)hw_ctz(v) + ((u64)hw_clz(v) << 8);
    b = b * 67 + (u64)ctz_loop(v) + ((u64)clz_loop(v) << 8);
    u32 w = (u32)v ? (u32)v : 1;
    c = c * 67 + (u64)hw_ctz32(w) + ((u64)hw_clz32(w) << 8);
    d = d * 67 + (u64)ctz_loop(w) + ((u64)(clz_loop(w) - 32) << 8);
    p = p * 3 + (u64)hw_popcount(v) + ((u64)hw_parity(v) << 7);
    int pc = 0;
    for (u64 t = v; t; t &= t - 1) pc++;
    pr = pr * 3 + (u64)pc + ((u64)(pc & 1) << 7);
  }
  check("ctz/clz 64 vs loops", a, b);
  check("ctz/clz 32 vs loops", c, d);
  check("popcount/parity vs loop", p, pr);
}

// ---- switch jump tables ----------------------------------------------------------

__attribute__((noinline)) static u64 dispatch(u32 op, u64 x) {
  switch (op) {
    case 0: return x + 1;
    case 1: return x ^ 0x5555;
    case 2: return x << 3;
    case 3: return x >> 5;
    case 4: return x * 9;
    case 5: return ~x;
    case 6: return x - 77;
    case 7: return (x << 32) | (x >> 32);
    case 8: return x & 0xff00ff;
    case 9: return x | 0x1000;
    case 10: return x / 3;
    case 11: return x % 1000;
    default: return x;
  }
}

static u64 dispatch_if(u32 op, u64 x) {
  if (op == 0) return x + 1;
  if (op == 1) return x ^ 0x5555;
  if (op == 2) return x << 3;
  if (op == 3) return x >> 5;
  if (op == 4) return x * 9;
  if (op == 5) return ~x;
  if (op == 6) return x - 77;
  if (op == 7) return (x << 32) | (x >> 32);
  if (op == 8) return x & 0xff00ff;
  if (op == 9) return x | 0x1000;
  if (op == 10) return x / 3;
  if (op == 11) return x % 1000;
  return x;
}

__attribute__((noinline)) static int classify(char c) {
  switch (c) {
    case 'a': case 'e': case 'i': case 'o': case 'u': return 1;
    case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9': return 2;
    case ' ': case '\t': case '\n': return 3;
    case '.': case ',': case ';': case ':': return 4;
    default: return 0;
  }
}

static void check_switch(void) {
  u64 x = 1, y = 1;
  for (int i = 0; i < 1000; i++) {
    u32 op = (u32)(rnd() % 14);
    x = dispatch(op, x) + (u64)i;
    y = dispatch_if(op, y) + (u64)i;
  }
  check("switch table vs if chain", x, y);
  static const char text[] = "The quick brown fox, 42 times; jumped.\tover 7 lazy dogs: 1 2 3\n";
  u64 h = 0;
  for (const char *p = text; *p; p++) h = h * 5 + (u64)classify(*p);
  check("switch classify", h, 0x1de2257953667c0bull);  // computed independently (Python)
}

// ---- recursion -------------------------------------------------------------------

__attribute__((noinline)) static u64 ackermann(u64 m, u64 n) {
  if (m == 0) return n + 1;
  if (n == 0) return ackermann(m - 1, 1);
  return ackermann(m - 1, ackermann(m, n - 1));
}

__attribute__((noinline)) static u64 fib(u32 n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int is_odd(u32 n);
__attribute__((noinline)) static int is_even(u32 n) { return n == 0 ? 1 : is_odd(n - 1); }
__attribute__((noinline)) static int is_odd(u32 n) { return n == 0 ? 0 : is_even(n - 1); }

static void check_recursion(void) {
  check("ackermann(2,3)", ackermann(2, 3), 9);
  check("ackermann(3,3)", ackermann(3, 3), 61);
  check("fib(20)", fib(20), 6765);
  u64 f = 0, a = 0, b = 1;
  for (int i = 0; i < 23; i++) {
    u64 t = a + b;
    a = b;
    b = t;
  }
  f = a;
  check("fib(23)", fib(23), f);
  check("even/odd 301", (u64)is_even(301) * 2 + (u64)is_odd(301), 1);
}

// ---- string instructions ---------------------------------------------------------

// gcc expands these inline with the strategies given on the command line.
__attribute__((noinline)) static void copy_n(void *d, const void *s, usize n) { __builtin_memcpy(d, s, n); }
__attribute__((noinline)) static void fill_n(void *d, int c, usize n) { __builtin_memset(d, c, n); }

static usize asm_strlen(const char *s) {
  const char *p = s;
  usize cnt = (usize)-1;
  __asm__ volatile("repne scasb" : "+D"(p), "+c"(cnt) : "a"(0) : "memory", "cc");
  return ~cnt - 1;
}

static int asm_memcmp(const void *a, const void *b, usize n) {
  const u8 *pa = a, *pb = b;
  if (n == 0) return 0;
  __asm__ volatile("repe cmpsb" : "+S"(pa), "+D"(pb), "+c"(n) : : "memory", "cc");
  int x = pa[-1], y = pb[-1];
  return x - y;
}

// memmove for overlapping dst > src: copy backwards with DF=1.
static void asm_move_back(u8 *d, const u8 *s, usize n) {
  if (n == 0) return;
  const u8 *sp = s + n - 1;
  u8 *dp = d + n - 1;
  __asm__ volatile("std\n\trep movsb\n\tcld" : "+S"(sp), "+D"(dp), "+c"(n) : : "memory");
}

static u8 sa[1024], sb[1024];

static u64 fnv(const u8 *p, usize n) {
  u64 h = 0xcbf29ce484222325ull;
  for (usize i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static void check_strings(void) {
  for (int i = 0; i < 1024; i++) sa[i] = (u8)(rnd() >> 56);
  u64 ok = 1;
  for (usize n = 0; n < 300; n += 7) {
    usize off = n % 13;
    fill_n(sb, 0x5a, sizeof sb);
    copy_n(sb + off, sa + 3, n);
    for (usize i = 0; i < sizeof sb; i++) {
      u8 want = (i >= off && i < off + n) ? sa[3 + i - off] : 0x5a;
      if (sb[i] != want) ok = 0;
    }
  }
  check("inline memcpy/memset", ok, 1);

  struct big {
    u64 w[37];
  } x, y;
  for (int i = 0; i < 37; i++) x.w[i] = rnd();
  __asm__ volatile("" : : "r"(&x) : "memory");
  y = x;  // struct copy: rep movs
  __asm__ volatile("" : : "r"(&y) : "memory");
  check("struct copy", fnv((const u8 *)&y, sizeof y), fnv((const u8 *)&x, sizeof x));
  __builtin_memset(&y, 0, sizeof y);  // constant-size clear: rep stos
  __asm__ volatile("" : : "r"(&y) : "memory");
  u64 nz = 0;
  for (int i = 0; i < 37; i++) nz |= y.w[i];
  check("struct clear", nz, 0);

  static const char s1[] = "differential testing of string instructions";
  check("repne scasb strlen", asm_strlen(s1), sizeof s1 - 1);
  check("repne scasb empty", asm_strlen(""), 0);
  for (int i = 0; i < 64; i++) sb[i] = sa[i];
  check("repe cmpsb equal", (u64)(asm_memcmp(sa, sb, 64) == 0), 1);
  sb[40] ^= 0x10;
  check("repe cmpsb diff", (u64)(i64)asm_memcmp(sa, sb, 64), (u64)(i64)((int)sa[40] - (int)sb[40]));

  for (int i = 0; i < 256; i++) sb[i] = (u8)i;
  asm_move_back(sb + 10, sb, 200);
  u64 good = 1;
  for (int i = 0; i < 256; i++) {
    u8 want = i < 10 ? (u8)i : i < 210 ? (u8)(i - 10) : (u8)i;
    if (sb[i] != want) good = 0;
  }
  check("std rep movsb overlap", good, 1);
  u64 df;
  __asm__ volatile("pushfq\n\tpop %0" : "=r"(df));
  check("df clear after", (df >> 10) & 1, 0);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  state = seed;
  check_division();
  check_mulhi();
  check_bitscan();
  check_switch();
  check_recursion();
  check_strings();
  out_str("failures=");
  out_udec(failures);
  out_char('\n');
  out_flush();
  return (int)failures;
}
