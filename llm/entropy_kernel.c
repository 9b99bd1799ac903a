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
