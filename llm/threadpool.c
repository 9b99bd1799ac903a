// The model's ggml thread pool, shared by llama_decode and the entropy
// passes that run between two decodes (see threadpool.go).
#include <stdlib.h>
#include <math.h>
#include "ggml.h"
#include "ggml-cpu.h"
#include "helpers.h"

#define TP_MAX_BLOCKS 64

// fragility_tp is a ggml thread pool attached to a llama context, and a
// two-node ggml graph whose custom ops compute one entropy pass on the
// pool's threads: the first node the largest logit of each block (with
// its lowest index and whether the block holds a NaN), the second, after
// ggml's barrier between nodes, the block sums of the pass. In each node
// the threads take blocks in turn from a counter, each block done whole by
// one thread into its own slot, so the results do not depend on which
// thread took which block. The job fields are set before each compute.
struct fragility_tp {
	struct ggml_threadpool *pool;
	struct ggml_context *gctx;
	struct ggml_cgraph *graph;
	// the job of the current compute
	const float *logits;
	int n, chunk, nb, v1;
	double *zs, *ss;
	int next_max, next_sum;
	float bmax[TP_MAX_BLOCKS];
	int barg[TP_MAX_BLOCKS], bnan[TP_MAX_BLOCKS];
};

static int tp_len(const struct fragility_tp *t, int b) {
	int lo = b * t->chunk;
	return t->n - lo < t->chunk ? t->n - lo : t->chunk;
}

static void tp_max_op(struct ggml_tensor *dst, int ith, int nth, void *ud) {
	(void)dst; (void)ith; (void)nth;
	struct fragility_tp *t = ud;
	for (;;) {
		int b = __atomic_fetch_add(&t->next_max, 1, __ATOMIC_RELAXED);
		if (b >= t->nb) {
			return;
		}
		t->bmax[b] = fragility_max(t->logits + b * t->chunk, NULL, tp_len(t, b), &t->barg[b], &t->bnan[b]);
	}
}

// tp_combine merges the blocks' maxima as fragility_max merges its lanes:
// the largest value and, among equal ones, the lowest index (the blocks
// are in index order, so the first block holding it).
static float tp_combine(const struct fragility_tp *t, int *arg, int *nan) {
	float m = t->bmax[0];
	int a = t->barg[0], bad = 0;
	for (int b = 0; b < t->nb; b++) {
		bad |= t->bnan[b];
		if (t->bmax[b] > m) {
			m = t->bmax[b];
			a = b * t->chunk + t->barg[b];
		}
	}
	*arg = a;
	*nan = bad;
	return m;
}

static void tp_sum_op(struct ggml_tensor *dst, int ith, int nth, void *ud) {
	(void)dst; (void)ith; (void)nth;
	struct fragility_tp *t = ud;
	int arg, nan;
	float m = tp_combine(t, &arg, &nan);
	if (nan || isinf(m)) {
		return;
	}
	for (;;) {
		int b = __atomic_fetch_add(&t->next_sum, 1, __ATOMIC_RELAXED);
		if (b >= t->nb) {
			return;
		}
		if (t->v1) {
			fragility_entropy_sums(t->logits + b * t->chunk, tp_len(t, b), m, &t->zs[b], &t->ss[b]);
		} else {
			fragility_entropy_sums2(t->logits + b * t->chunk, tp_len(t, b), m, &t->zs[b], &t->ss[b]);
		}
	}
}

struct fragility_tp *fragility_tp_new(int n_threads, unsigned poll) {
	struct fragility_tp *t = calloc(1, sizeof *t);
	if (!t) {
		return NULL;
	}
	struct ggml_init_params ip = {
		.mem_size = 4 * ggml_tensor_overhead() + ggml_graph_overhead_custom(8, false),
		.mem_buffer = NULL,
		.no_alloc = true,
	};
	t->gctx = ggml_init(ip);
	if (!t->gctx) {
		free(t);
		return NULL;
	}
	struct ggml_tensor *mx = ggml_custom_4d(t->gctx, GGML_TYPE_F32, 1, 1, 1, 1, NULL, 0, tp_max_op, GGML_N_TASKS_MAX, t);
	struct ggml_tensor *sum = ggml_custom_4d(t->gctx, GGML_TYPE_F32, 1, 1, 1, 1, &mx, 1, tp_sum_op, GGML_N_TASKS_MAX, t);
	t->graph = ggml_new_graph_custom(t->gctx, 8, false);
	ggml_build_forward_expand(t->graph, sum);
	struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
	tpp.poll = poll;
	t->pool = ggml_threadpool_new(&tpp);
	if (!t->pool) {
		ggml_free(t->gctx);
		free(t);
		return NULL;
	}
	return t;
}

struct ggml_threadpool *fragility_tp_pool(struct fragility_tp *t) { return t->pool; }

int fragility_tp_max_blocks(void) { return TP_MAX_BLOCKS; }

int fragility_tp_pass(struct fragility_tp *t, int n_threads, int v1, const float *logits, int n, int chunk,
                      float *m, int *arg, int *nan, double *zs, double *ss) {
	t->logits = logits;
	t->n = n;
	t->chunk = chunk;
	t->nb = (n + chunk - 1) / chunk;
	if (n < 1 || t->nb > TP_MAX_BLOCKS) {
		return -1;
	}
	t->v1 = v1;
	t->zs = zs;
	t->ss = ss;
	t->next_max = 0;
	t->next_sum = 0;
	struct ggml_cplan plan = ggml_graph_plan(t->graph, n_threads, t->pool);
	if (ggml_graph_compute(t->graph, &plan) != GGML_STATUS_SUCCESS) {
		return -1;
	}
	*m = tp_combine(t, arg, nan);
	return 0;
}

void fragility_tp_free(struct fragility_tp *t) {
	if (!t) {
		return;
	}
	ggml_threadpool_free(t->pool);
	ggml_free(t->gctx);
	free(t);
}
