// Small C helpers for the cgo layer: the log trampoline and batch filling.
#include <time.h>
#include <string.h>
#include "llama.h"
#include "helpers.h"
#include "_cgo_export.h"

static void fragility_log_cb(enum ggml_log_level level, const char *text, void *user_data) {
	(void)user_data;
	fragilityLog((int)level, (char *)text);
}

void fragility_install_log(void) {
	llama_log_set(fragility_log_cb, NULL);
}

void fragility_batch_set(struct llama_batch *b, int i, llama_token t, llama_pos p, llama_seq_id s, int8_t logits) {
	b->token[i] = t;
	b->pos[i] = p;
	b->n_seq_id[i] = 1;
	b->seq_id[i][0] = s;
	b->logits[i] = logits;
}

// The pass guard: entropy passes of the pass pool read a row of logits in
// place, in llama.cpp's output buffer, while the next llama_decode runs.
// That decode writes new logits into the same buffer only after its graph
// is computed; fragility_pass_guard_cb, the context's eval callback, is
// called when the graph's last node "result_output" (the logits) has been
// computed, before that write, and waits there until no pass is pending.
// It spins for about the first thousand checks (a pass still running
// usually ends within microseconds of the decode's end, if it has not
// already), then sleeps 20 µs between checks. pending is raised by Go
// (step) before a pass is queued and lowered by the pass worker when it is
// done; seen records that the callback met the
// logits node, so that a model whose graph names it otherwise falls back to
// copying the logits.
bool fragility_pass_guard_cb(struct ggml_tensor *t, bool ask, void *user_data) {
	struct fragility_pass_guard *g = user_data;
	if (ask) {
		return strcmp(ggml_get_name(t), "result_output") == 0;
	}
	__atomic_store_n(&g->seen, 1, __ATOMIC_RELEASE);
	for (int spins = 0; __atomic_load_n(&g->pending, __ATOMIC_ACQUIRE) > 0; spins++) {
		if (spins < 1000) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		} else { // the pool fell behind: let the core go meanwhile
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
	return true;
}

void fragility_pass_guard_add(struct fragility_pass_guard *g, int d) {
	__atomic_add_fetch(&g->pending, d, __ATOMIC_ACQ_REL);
}

int fragility_pass_guard_seen(struct fragility_pass_guard *g) {
	return __atomic_load_n(&g->seen, __ATOMIC_ACQUIRE);
}
