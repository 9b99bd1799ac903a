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
// *nan when a NaN is present. The maximum and the NaN test run over eight
// lanes; the index is then the first position holding the maximum.
float fragility_max(const float *logits, int n, int *arg, int *nan) {
	float m = logits[0];
	int bad = 0, i = 0;
	if (n >= 8) {
		v8f mv, x;
		memcpy(&mv, logits, sizeof mv);
		v8i badv = mv != mv;
		for (i = 8; i + 8 <= n; i += 8) {
			memcpy(&x, logits + i, sizeof x);
			badv |= x != x;
			v8i gt = x > mv;
			v8i xi, mi;
			memcpy(&xi, &x, sizeof xi);
			memcpy(&mi, &mv, sizeof mi);
			v8i r = (gt & xi) | (~gt & mi);
			memcpy(&mv, &r, sizeof mv);
		}
		float lanes[8];
		int32_t blanes[8];
		memcpy(lanes, &mv, sizeof lanes);
		memcpy(blanes, &badv, sizeof blanes);
		m = lanes[0];
		for (int j = 0; j < 8; j++) {
			bad |= blanes[j] != 0;
			if (lanes[j] > m) {
				m = lanes[j];
			}
		}
	}
	for (; i < n; i++) { // tail
		float l = logits[i];
		bad |= (l != l);
		if (l > m) {
			m = l;
		}
	}
	int a = 0;
	while (a < n && !(logits[a] == m)) {
		a++;
	}
	*arg = a < n ? a : 0;
	*nan = bad;
	return m;
}
