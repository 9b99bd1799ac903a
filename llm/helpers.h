// Declarations of the C helpers in helpers.c.
#ifndef FRAGILITY_HELPERS_H
#define FRAGILITY_HELPERS_H
#include "llama.h"
void fragility_install_log(void);
void fragility_batch_set(struct llama_batch *b, int i, llama_token t, llama_pos p, llama_seq_id s, int8_t logits);
void fragility_entropy_sums(const float *logits, int n, double m, double *z_out, double *s_out);
void fragility_entropy_sums2(const float *logits, int n, double m, double *z_out, double *s_out);
extern const char *fragility_entropy_isa;
void fragility_entropy_init(const char *want);
extern const int fragility_entropy_scalar_fma;
float fragility_max(const float *logits, float *dst, int n, int *arg, int *nan);
// fragility_pass_guard: see helpers.c.
struct fragility_pass_guard {
	int pending; // passes reading the logits in place, not yet done
	int seen;    // the eval callback met the logits node
};
bool fragility_pass_guard_cb(struct ggml_tensor *t, bool ask, void *user_data);
void fragility_pass_guard_add(struct fragility_pass_guard *g, int d);
int fragility_pass_guard_seen(struct fragility_pass_guard *g);
// fragility_tp: see threadpool.c.
struct fragility_tp;
struct ggml_threadpool;
struct fragility_tp *fragility_tp_new(int n_threads, unsigned poll);
struct ggml_threadpool *fragility_tp_pool(struct fragility_tp *t);
int fragility_tp_max_blocks(void);
int fragility_tp_pass(struct fragility_tp *t, int n_threads, int v1, const float *logits, int n, int chunk,
                      float *m, int *arg, int *nan, double *zs, double *ss);
void fragility_tp_free(struct fragility_tp *t);
#endif
