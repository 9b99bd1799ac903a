// Small C helpers for the cgo layer: the log trampoline and batch filling.
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
