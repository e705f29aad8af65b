// fpmix: a floating-point workload for the emulator (bare build) and the host
// CPU (native build), compiled at -O3 with SSE2 so gcc vectorises the
// element-wise double loops: a dense matrix product, saxpy/daxpy-style
// kernels, a stencil, a small n-body step (sqrt, division), single-precision
// arrays, and scalar math (Newton iterations, conversions, min/max). No
// -ffast-math: results are bit-exact IEEE, so both builds print the same
// bits.
//
// Parameterised like intmix: FPMIX_ITERATIONS at build time, kept in a
// volatile global (the benchmark patches it). Prints the bit patterns of the
// results per phase and a final checksum; exits with its low 7 bits.
#include "platform.h"

#ifndef FPMIX_ITERATIONS
#define FPMIX_ITERATIONS 2
#endif

#define MN 40
#define VN 1024
#define NB 24

static volatile u32 iterations = FPMIX_ITERATIONS;
static volatile u64 seed0 = 0x243f6a8885a308d3ull;
static u64 rng_state;

static u64 next64(void) {
  u64 x = rng_state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  rng_state = x;
  return x * 0x2545f4914f6cdd1dull;
}

/** A double in [-1, 1) from the generator (exact: 53 random bits). */
static double nextd(void) { return (double)(i64)(next64() >> 10) / (double)(1ull << 53) - 0.0; }

static u64 bits(double d) {
  u64 u;
  __builtin_memcpy(&u, &d, 8);
  return u;
}

static u32 fbits(float f) {
  u32 u;
  __builtin_memcpy(&u, &f, 4);
  return u;
}

static double A[MN][MN], B[MN][MN], C[MN][MN];
static double x[VN], y[VN], z[VN];
static float fx[VN], fy[VN];

static void matmul(void) {
  for (int i = 0; i < MN; i++) {
    for (int j = 0; j < MN; j++) C[i][j] = 0.0;
    for (int k = 0; k < MN; k++) {
      double a = A[i][k];
      for (int j = 0; j < MN; j++) C[i][j] += a * B[k][j];
    }
  }
}

static void kernels(double s) {
  for (int i = 0; i < VN; i++) y[i] = s * x[i] + y[i];
  for (int i = 1; i < VN - 1; i++) z[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1];
  for (int i = 0; i < VN; i++) x[i] = x[i] * 0.999 - z[i] * 0.001;
  for (int i = 0; i < VN; i++) fy[i] = fy[i] * 0.5f + fx[i] * 1.25f;
}

static double px[NB], py[NB], pz[NB], vx[NB], vy[NB], vz[NB], mass[NB];

static void nbody_step(double dt) {
  for (int i = 0; i < NB; i++) {
    double ax = 0, ay = 0, az = 0;
    for (int j = 0; j < NB; j++) {
      if (j == i) continue;
      double dx = px[j] - px[i], dy = py[j] - py[i], dz = pz[j] - pz[i];
      double d2 = dx * dx + dy * dy + dz * dz + 0.01;
      double inv = 1.0 / (d2 * __builtin_sqrt(d2));
      ax += dx * inv * mass[j];
      ay += dy * inv * mass[j];
      az += dz * inv * mass[j];
    }
    vx[i] += ax * dt;
    vy[i] += ay * dt;
    vz[i] += az * dt;
  }
  for (int i = 0; i < NB; i++) {
    px[i] += vx[i] * dt;
    py[i] += vy[i] * dt;
    pz[i] += vz[i] * dt;
  }
}

/** Scalar math: Newton's square root against sqrtsd, conversions, min/max. */
static u64 scalar_mix(u32 n) {
  u64 h = 0;
  double lo = 1e300, hi = -1e300;
  for (u32 i = 1; i <= n; i++) {
    double v = (double)i * 1.000123 + 0.5;
    double r = v;
    for (int k = 0; k < 6; k++) r = 0.5 * (r + v / r);
    double s = __builtin_sqrt(v);
    i64 t = (i64)(r * 1024.0);
    h = h * 31 + (u64)t + (u64)(i64)(s * 8.0);
    lo = v / (r + 1.0) < lo ? v / (r + 1.0) : lo;
    hi = r - s > hi ? r - s : hi;
    float f = (float)v;
    h ^= fbits(f * f) >> 3;
  }
  return h ^ bits(lo) ^ (bits(hi) << 1);
}

static double sum(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i];
  return s;
}

int main(int argc, char **argv) {
  u32 n = plat_iterations(argc, argv, iterations);
  rng_state = seed0;
  for (int i = 0; i < MN; i++)
    for (int j = 0; j < MN; j++) {
      A[i][j] = nextd();
      B[i][j] = nextd();
    }
  for (int i = 0; i < VN; i++) {
    x[i] = nextd();
    y[i] = nextd();
    fx[i] = (float)nextd();
    fy[i] = (float)nextd();
  }
  for (int i = 0; i < NB; i++) {
    px[i] = nextd() * 10;
    py[i] = nextd() * 10;
    pz[i] = nextd() * 10;
    vx[i] = vy[i] = vz[i] = 0;
    mass[i] = 1.0 + (nextd() + 1.0) * 0.5;
  }
  u64 total = 0;
  for (u32 it = 0; it < n; it++) {
    matmul();
    for (int i = 0; i < MN; i++)
      for (int j = 0; j < MN; j++) B[i][j] = C[i][j] * (1.0 / MN);
    for (int k = 0; k < 8; k++) kernels(0.125 + k * 0.0625);
    for (int k = 0; k < 4; k++) nbody_step(0.01);
    u64 sm = scalar_mix(2000);
    float fs = 0;
    for (int i = 0; i < VN; i++) fs += fy[i];
    u64 r[6] = {bits(sum(&C[0][0], MN * MN)), bits(sum(x, VN)), bits(sum(y, VN)), fbits(fs),
                bits(sum(px, NB) + sum(vy, NB)), sm};
    out_str("iter ");
    out_udec(it);
    out_char('\n');
    out_kv64("  matmul", r[0]);
    out_kv64("  x", r[1]);
    out_kv64("  y", r[2]);
    out_kv64("  fy", r[3]);
    out_kv64("  nbody", r[4]);
    out_kv64("  scalar", r[5]);
    for (int k = 0; k < 6; k++) total = (total ^ r[k]) * 0x100000001b3ull;
  }
  out_kv64("total", total);
  out_flush();
  return (int)(total & 0x7f);
}
