// The entropy kernel: sums over one block of logits for the exact Shannon
// entropy of their softmax (see Entropy in entropy.go for the formula).
//
// Written for the compiler's auto-vectoriser: eight independent lanes, each
// with its own Kahan-compensated float64 sums, combined in a fixed order at
// the end, and an exp() of our own (range reduction to r in [-ln2/2, ln2/2]
// and a degree-13 Taylor polynomial, error about 1 ulp) so that no libm call
// blocks vectorisation. The result is deterministic for a given binary and
// does not depend on how many threads run blocks.
#include <stdint.h>
#include <string.h>
#include "helpers.h"

#define LANES 8

// exp(d) for d <= 0; returns 0 below -700 (and for -inf), where
// exp(d) < 1e-304 and its share of the entropy is far below float64
// resolution.
static inline double fragility_exp(double d) {
	const double log2e = 1.4426950408889634;
	const double ln2_hi = 6.93147180369123816490e-01;
	const double ln2_lo = 1.90821492927058770002e-10;
	const double shifter = 6755399441055744.0; // 1.5 * 2^52: rounds to nearest integer
	double dd = d < -700.0 ? -700.0 : d;
	double kshift = dd * log2e + shifter;
	double kf = kshift - shifter;
	double r = (dd - kf * ln2_hi) - kf * ln2_lo;
	// Taylor series of e^r, Horner form, degree 13.
	double p = 1.0 / 6227020800.0;
	p = p * r + 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	int64_t kbits;
	memcpy(&kbits, &kshift, sizeof kbits);
	int64_t k = kbits - INT64_C(0x4338000000000000); // the integer held in kshift's low bits
	int64_t bits = (k + 1023) << 52;
	double scale;
	memcpy(&scale, &bits, sizeof scale);
	double e = p * scale;
	return d < -700.0 ? 0.0 : e;
}

typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4l __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));

static inline v4d blend(v4l mask, v4d a, v4d b) { // mask ? a : b, lane by lane
	v4l ai, bi;
	memcpy(&ai, &a, sizeof ai);
	memcpy(&bi, &b, sizeof bi);
	v4l r = (mask & ai) | (~mask & bi);
	v4d out;
	memcpy(&out, &r, sizeof out);
	return out;
}

// fragility_exp4 is fragility_exp on four lanes with GCC vector extensions.
static inline v4d fragility_exp4(v4d d) {
	const v4d lo = {-700.0, -700.0, -700.0, -700.0};
	v4l under = d < lo;
	v4d dd = blend(under, lo, d);
	const double shifter = 6755399441055744.0;
	v4d kshift = dd * 1.4426950408889634 + shifter;
	v4d kf = kshift - shifter;
	v4d r = (dd - kf * 6.93147180369123816490e-01) - kf * 1.90821492927058770002e-10;
	v4d p = r * (1.0 / 6227020800.0) + 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	v4l kbits;
	memcpy(&kbits, &kshift, sizeof kbits);
	v4l bits = ((kbits - INT64_C(0x4338000000000000)) + 1023) << 52;
	v4d scale;
	memcpy(&scale, &bits, sizeof scale);
	const v4d zero = {0, 0, 0, 0};
	return blend(under, zero, p * scale);
}

// kahan4 adds x to the four-lane sum s with compensation c.
static inline void kahan4(v4d *s, v4d *c, v4d x) {
	v4d y = x - *c;
	v4d t = *s + y;
	*c = (t - *s) - y;
	*s = t;
}

void fragility_entropy_sums(const float *logits, int n, double m, double *z_out, double *s_out) {
	v4d zs[2] = {{0}}, zc[2] = {{0}}, ss[2] = {{0}}, sc[2] = {{0}};
	const v4d zero = {0, 0, 0, 0};
	int i = 0;
	for (; i + LANES <= n; i += LANES) {
		for (int h = 0; h < 2; h++) {
			v4f lf;
			memcpy(&lf, logits + i + 4 * h, sizeof lf);
			v4d d = __builtin_convertvector(lf, v4d) - m;
			v4d e = fragility_exp4(d);
			v4d ed = blend(e == zero, zero, e * d); // -inf logits: 0 * -inf would be NaN
			kahan4(&zs[h], &zc[h], e);
			kahan4(&ss[h], &sc[h], ed);
		}
	}
	double lz[LANES], lzc[LANES], ls[LANES], lsc[LANES];
	memcpy(lz, zs, sizeof lz);
	memcpy(lzc, zc, sizeof lzc);
	memcpy(ls, ss, sizeof ls);
	memcpy(lsc, sc, sizeof lsc);
	for (int j = 0; i < n; i++, j++) { // tail, fewer than LANES values
		double d = (double)logits[i] - m;
		double e = fragility_exp(d);
		double ed = e == 0.0 ? 0.0 : e * d;
		double y = e - lzc[j];
		double t = lz[j] + y;
		lzc[j] = (t - lz[j]) - y;
		lz[j] = t;
		double y2 = ed - lsc[j];
		double t2 = ls[j] + y2;
		lsc[j] = (t2 - ls[j]) - y2;
		ls[j] = t2;
	}
	double z = 0, zcomp = 0, s = 0, scomp = 0;
	for (int j = 0; j < LANES; j++) {
		double y = (lz[j] - lzc[j]) - zcomp;
		double t = z + y;
		zcomp = (t - z) - y;
		z = t;
		double y2 = (ls[j] - lsc[j]) - scomp;
		double t2 = s + y2;
		scomp = (t2 - s) - y2;
		s = t2;
	}
	*z_out = z;
	*s_out = s;
}

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

// fragility_max returns the largest logit and its lowest index, and sets
// *nan when a NaN is present; when dst is not NULL it also copies the n
// logits to dst, in the same pass over memory. Four accumulators of eight
// lanes (32 positions per step, so that the compare-and-select chains run in
// parallel) each keep their maximum and the first index holding it (strict
// >, so a later equal value does not replace it); the result is the largest
// of the 32 maxima and, among those equal to it, the smallest index: the
// first position of the maximum in the whole array, as a scalar scan finds.
#define MAXACC 4
float fragility_max(const float *logits, float *dst, int n, int *arg, int *nan) {
	float m = logits[0];
	int a = 0, bad = 0, i = 0;
	if (n >= 8 * MAXACC) {
		v8f mv[MAXACC];
		v8i iv[MAXACC], cur[MAXACC], badv = {0};
		const v8i step = {8 * MAXACC, 8 * MAXACC, 8 * MAXACC, 8 * MAXACC, 8 * MAXACC, 8 * MAXACC, 8 * MAXACC, 8 * MAXACC};
		for (int k = 0; k < MAXACC; k++) {
			memcpy(&mv[k], logits + 8 * k, sizeof mv[k]);
			if (dst) {
				memcpy(dst + 8 * k, &mv[k], sizeof mv[k]);
			}
			badv |= mv[k] != mv[k];
			for (int j = 0; j < 8; j++) {
				iv[k][j] = 8 * k + j;
			}
			cur[k] = iv[k];
		}
		for (i = 8 * MAXACC; i + 8 * MAXACC <= n; i += 8 * MAXACC) {
			for (int k = 0; k < MAXACC; k++) {
				v8f x;
				memcpy(&x, logits + i + 8 * k, sizeof x);
				if (dst) {
					memcpy(dst + i + 8 * k, &x, sizeof x);
				}
				cur[k] += step;
				badv |= x != x;
				v8i gt = x > mv[k];
				v8i xi, mi;
				memcpy(&xi, &x, sizeof xi);
				memcpy(&mi, &mv[k], sizeof mi);
				v8i r = (gt & xi) | (~gt & mi);
				memcpy(&mv[k], &r, sizeof mv[k]);
				iv[k] = (gt & cur[k]) | (~gt & iv[k]);
			}
		}
		int32_t blanes[8];
		memcpy(blanes, &badv, sizeof blanes);
		m = mv[0][0];
		a = iv[0][0];
		for (int k = 0; k < MAXACC; k++) {
			for (int j = 0; j < 8; j++) {
				bad |= blanes[j] != 0;
				float v = mv[k][j];
				int32_t ix = iv[k][j];
				if (v > m || (v == m && ix < a)) {
					m = v;
					a = ix;
				}
			}
		}
	}
	for (; i < n; i++) { // tail (or all of a short array)
		float l = logits[i];
		if (dst) {
			dst[i] = l;
		}
		bad |= (l != l);
		if (l > m) {
			m = l;
			a = i;
		}
	}
	*arg = a;
	*nan = bad;
	return m;
}

// ---------------------------------------------------------------------------
// Kernel 2 (fragility_entropy_sums2): the same two sums with fewer operations
// per logit, so that one pass over a 262,144-entry vocabulary fits in
// 0.3 ms of one core. Per logit:
//
//   d = x − m (exact in float64), kept when d ≥ −700 (else e = 0: −Inf
//   logits, and probabilities below 1e-304);
//   k = round(d / ln 2), r = d − k·ln 2 (Cody–Waite, two fused multiply-adds),
//   |r| ≤ ln2/2; e^r by a degree-11 polynomial (the degree-16 Taylor series
//   of e^r economised on |r| ≤ 0.3466 with Chebyshev polynomials: truncation
//   error below 3.2e-18, so e is within about 1 ulp of e^d);
//   e = e^r · 2^k (k added to the exponent bits); z += e, s += e·d.
//
// The sums run in eight lanes (lane j takes the logits i ≡ j mod 8: one
// AVX-512 vector, two AVX2 vectors or eight scalars), in plain float64
// additions over runs of RUN steps (RUN terms per lane), and each run is
// then added to per-lane totals with Kahan compensation; the lanes are
// combined at the end in a fixed order, also compensated. Error bound of each returned sum, relative (all terms of z are
// ≥ 0, all terms of s ≤ 0, so relative to the sum itself): about
// (RUN + 4)·u from the summation plus 2u from e and e·d, u = 2^-53, i.e.
// below 2.5e-15 for RUN = 16.
//
// The code path is chosen at run time from the CPU's features (AVX-512F;
// else AVX2 with FMA; else scalar), whatever the build's -march flags, so a
// portable build (make gpu-bundle) is as fast as a native one. Every path
// does the same float64 operations in the same order (fused multiply-adds
// where the vector code fuses), so the sums are bit-identical across paths
// and builds, but for a CPU without FMA (the scalar path then rounds the
// products separately).
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#define RUN 16

static const double k2_log2e = 1.4426950408889634;
static const double k2_shift = 6755399441056767.0; // 1.5·2^52 + 1023: round to integer, exponent bias included
static const double k2_ln2_hi = 6.93147180559945286227e-01; // ln 2 rounded to float64
static const double k2_ln2_lo = 2.31904681384629955842e-17; // ln 2 − k2_ln2_hi
static const double k2_c[12] = {
	1.0, 1.0, 0.5000000000000019, 0.16666666666666702,
	0.041666666666487974, 0.008333333333309512, 0.001388888895234707, 0.00019841269909250833,
	2.4801485448150653e-05, 2.7557224927468285e-06, 2.763265216954066e-07, 2.511487974429777e-08,
};

// K2_TERM defines NAME(d, *ed): e^d (0 when d < −700 or d is NaN), and
// e^d·d in *ed (0 likewise), the scalar form of the vector code, with FMA(a,
// b, c) for a·b + c.
#define K2_TERM(NAME, FMA)                                                       \
	static inline double NAME(double d, double *ed) {                            \
		if (!(d >= -700.0)) {                                                    \
			*ed = 0.0;                                                           \
			return 0.0;                                                          \
		}                                                                        \
		double ks = FMA(d, k2_log2e, k2_shift);                                  \
		double kf = ks - k2_shift;                                               \
		double r = FMA(-kf, k2_ln2_hi, d);                                       \
		r = FMA(-kf, k2_ln2_lo, r);                                              \
		double p = k2_c[11];                                                     \
		for (int j = 10; j >= 0; j--) {                                          \
			p = FMA(p, r, k2_c[j]);                                              \
		}                                                                        \
		int64_t kb;                                                              \
		memcpy(&kb, &ks, sizeof kb);                                             \
		kb <<= 52;                                                               \
		double scale;                                                            \
		memcpy(&scale, &kb, sizeof scale);                                       \
		double e = p * scale;                                                    \
		*ed = e * d;                                                             \
		return e;                                                                \
	}

// kahan adds x to sum with compensation c.
static inline void k2_kahan(double *sum, double *c, double x) {
	double y = x - *c;
	double t = *sum + y;
	*c = (t - *sum) - y;
	*sum = t;
}

// K2_KERNEL defines NAME(logits, n, m, z_out, s_out) from the vector type V
// of W doubles, NV vectors per step of K2_LANES = NV·W logits, and the
// operations LOAD (W floats to doubles), SET1, ADD, SUB, TERMS (e and e·d of
// W values of d) and the scalar TERM for the tail. Lane j (0..7) sums the
// logits i ≡ j (mod 8) whatever W: AVX-512 (one vector of 8), AVX2 (two of
// 4) and the scalar path (eight doubles) add the same numbers in the same
// order and give the same bits (tested).
#define K2_LANES 8
#define K2_KERNEL(NAME, V, W, NV, LOAD, SET1, ADD, SUB, TERMS, TERM)             \
	static void NAME(const float *logits, int n, double m, double *z_out, double *s_out) { \
		const V mv = SET1(m);                                                    \
		const V zero = SET1(0.0);                                                \
		V zt[NV], zc[NV], st[NV], sc[NV];                                        \
		for (int h = 0; h < (NV); h++) {                                         \
			zt[h] = zc[h] = st[h] = sc[h] = zero;                                \
		}                                                                        \
		int i = 0;                                                               \
		while (i + K2_LANES <= n) {                                              \
			V zr[NV], sr[NV];                                                    \
			for (int h = 0; h < (NV); h++) {                                     \
				zr[h] = sr[h] = zero;                                            \
			}                                                                    \
			for (int r = 0; r < RUN && i + K2_LANES <= n; r++, i += K2_LANES) {  \
				for (int h = 0; h < (NV); h++) {                                 \
					V e, ed;                                                     \
					TERMS(SUB(LOAD(logits + i + h * (W)), mv), &e, &ed);         \
					zr[h] = ADD(zr[h], e);                                       \
					sr[h] = ADD(sr[h], ed);                                      \
				}                                                                \
			}                                                                    \
			for (int h = 0; h < (NV); h++) { /* Kahan, lane by lane */           \
				V y = SUB(zr[h], zc[h]);                                         \
				V t = ADD(zt[h], y);                                             \
				zc[h] = SUB(SUB(t, zt[h]), y);                                   \
				zt[h] = t;                                                       \
				y = SUB(sr[h], sc[h]);                                           \
				t = ADD(st[h], y);                                               \
				sc[h] = SUB(SUB(t, st[h]), y);                                   \
				st[h] = t;                                                       \
			}                                                                    \
		}                                                                        \
		double lz[K2_LANES], lzc[K2_LANES], ls[K2_LANES], lsc[K2_LANES];         \
		memcpy(lz, zt, sizeof lz);                                               \
		memcpy(lzc, zc, sizeof lzc);                                             \
		memcpy(ls, st, sizeof ls);                                               \
		memcpy(lsc, sc, sizeof lsc);                                             \
		double z = 0, zcomp = 0, s = 0, scomp = 0;                               \
		for (int j = 0; j < K2_LANES; j++) {                                     \
			k2_kahan(&z, &zcomp, lz[j] - lzc[j]);                                \
			k2_kahan(&s, &scomp, ls[j] - lsc[j]);                                \
		}                                                                        \
		for (; i < n; i++) { /* tail, fewer than K2_LANES logits */              \
			double ed;                                                           \
			double e = TERM((double)logits[i] - m, &ed);                         \
			k2_kahan(&z, &zcomp, e);                                             \
			k2_kahan(&s, &scomp, ed);                                            \
		}                                                                        \
		*z_out = z - zcomp;                                                      \
		*s_out = s - scomp;                                                      \
	}

#if defined(__x86_64__) || defined(__i386__)
#define K2_X86 1

#pragma GCC push_options
#pragma GCC target("avx2,fma")
K2_TERM(k2_term_fma, __builtin_fma)

static inline __m256d k2a_load(const float *p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
static inline void k2a_terms(__m256d d, __m256d *e, __m256d *ed) {
	__m256d keep = _mm256_cmp_pd(d, _mm256_set1_pd(-700.0), _CMP_GE_OQ);
	__m256d ks = _mm256_fmadd_pd(d, _mm256_set1_pd(k2_log2e), _mm256_set1_pd(k2_shift));
	__m256d kf = _mm256_sub_pd(ks, _mm256_set1_pd(k2_shift));
	__m256d r = _mm256_fnmadd_pd(kf, _mm256_set1_pd(k2_ln2_hi), d);
	r = _mm256_fnmadd_pd(kf, _mm256_set1_pd(k2_ln2_lo), r);
	__m256d p = _mm256_set1_pd(k2_c[11]);
	for (int j = 10; j >= 0; j--) {
		p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(k2_c[j]));
	}
	__m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(ks), 52));
	*e = _mm256_and_pd(keep, _mm256_mul_pd(p, scale));
	*ed = _mm256_and_pd(keep, _mm256_mul_pd(*e, d));
}
K2_KERNEL(k2_sums_avx2, __m256d, 4, 2, k2a_load, _mm256_set1_pd, _mm256_add_pd, _mm256_sub_pd, k2a_terms, k2_term_fma)
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
static inline __m512d k2b_load(const float *p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
static inline void k2b_terms(__m512d d, __m512d *e, __m512d *ed) {
	__mmask8 keep = _mm512_cmp_pd_mask(d, _mm512_set1_pd(-700.0), _CMP_GE_OQ);
	__m512d ks = _mm512_fmadd_pd(d, _mm512_set1_pd(k2_log2e), _mm512_set1_pd(k2_shift));
	__m512d kf = _mm512_sub_pd(ks, _mm512_set1_pd(k2_shift));
	__m512d r = _mm512_fnmadd_pd(kf, _mm512_set1_pd(k2_ln2_hi), d);
	r = _mm512_fnmadd_pd(kf, _mm512_set1_pd(k2_ln2_lo), r);
	__m512d p = _mm512_set1_pd(k2_c[11]);
	for (int j = 10; j >= 0; j--) {
		p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(k2_c[j]));
	}
	__m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_castpd_si512(ks), 52));
	*e = _mm512_maskz_mul_pd(keep, p, scale);
	*ed = _mm512_maskz_mul_pd(keep, *e, d);
}
K2_TERM(k2_term_fma512, __builtin_fma)
K2_KERNEL(k2_sums_avx512, __m512d, 8, 1, k2b_load, _mm512_set1_pd, _mm512_add_pd, _mm512_sub_pd, k2b_terms, k2_term_fma512)
#pragma GCC pop_options
#endif

#ifdef __FMA__
#define K2_FMA(a, b, c) __builtin_fma(a, b, c)
const int fragility_entropy_scalar_fma = 1;
#else
const int fragility_entropy_scalar_fma = 0;
#define K2_FMA(a, b, c) ((a) * (b) + (c)) // no fused multiply-add in hardware: a libm fma would be slow
#endif
K2_TERM(k2_term_scalar, K2_FMA)

// The scalar path: K2_KERNEL on "vectors" of one double.
static inline double k2s_load(const float *p) { return (double)*p; }
static inline double k2s_set1(double x) { return x; }
static inline double k2s_add(double a, double b) { return a + b; }
static inline double k2s_sub(double a, double b) { return a - b; }
static inline void k2s_terms(double d, double *e, double *ed) { *e = k2_term_scalar(d, ed); }
K2_KERNEL(k2_sums_scalar, double, 1, 8, k2s_load, k2s_set1, k2s_add, k2s_sub, k2s_terms, k2_term_scalar)

typedef void (*k2_fn)(const float *, int, double, double *, double *);

static k2_fn k2_chosen;
const char *fragility_entropy_isa;

// fragility_entropy_init chooses the kernel-2 path for this CPU and sets
// fragility_entropy_isa to its name: AVX-512F, else AVX2 with FMA, else
// scalar. want ("avx2" or "scalar"; NULL or "" for none) asks for a
// narrower path than the CPU allows, for tests and benchmarks; a path the
// CPU lacks is never chosen. Go calls it at package init, before any pass.
void fragility_entropy_init(const char *want) {
	int cap = 0; // 2: AVX-512F, 1: AVX2 and FMA
#ifdef K2_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		cap = __builtin_cpu_supports("avx512f") ? 2 : 1;
	}
#endif
	if (want && strcmp(want, "avx2") == 0 && cap > 1) {
		cap = 1;
	} else if (want && strcmp(want, "scalar") == 0) {
		cap = 0;
	}
	fragility_entropy_isa = "scalar";
	k2_chosen = k2_sums_scalar;
#ifdef K2_X86
	if (cap == 2) {
		fragility_entropy_isa = "avx512";
		k2_chosen = k2_sums_avx512;
	} else if (cap == 1) {
		fragility_entropy_isa = "avx2";
		k2_chosen = k2_sums_avx2;
	}
#endif
}

void fragility_entropy_sums2(const float *logits, int n, double m, double *z_out, double *s_out) {
	k2_chosen(logits, n, m, z_out, s_out);
}
