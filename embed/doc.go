// Package embed turns texts into sentence vectors in-process and reads them
// through the Dewey Decimal Classification (DDC): which of the ten main
// classes (or of the hundred divisions) a text is closest to, and by what
// margin.
//
// # Embedder
//
// An embedder directory holds an ONNX transformer (model.onnx, or the one
// *.onnx file there) that outputs token embeddings [batch, sequence, dim],
// its tokenizer.json (Hugging Face tokenizers format), and, optionally, the
// sentence-transformers configuration that says how token embeddings become
// a sentence vector: modules.json (whether a Normalize module follows),
// 1_Pooling/config.json (pooling mode) and sentence_bert_config.json
// (max_seq_length). The default embedder, fetched by `make models`, is
// all-MiniLM-L6-v2 (int8 weights): mean pooling over the attention mask,
// then L2 normalisation, at most 256 tokens, 384 dimensions.
//
// The model runs on github.com/knights-analytics/hugot. Tokenisation is
// ours (the pure-Go github.com/sugarme/tokenizer reading tokenizer.json, with
// the file's own truncation and padding settings switched off), and so are
// pooling and normalisation, so that both follow sentence-transformers
// exactly and are identical whichever backend runs the network. Each text
// runs as a batch of one: the Go backend picks its matrix kernels by problem
// size, so batching would change the low bits of a vector with the texts it
// is batched with; alone, a text's vector is the same in every call.
//
// # Backends
//
// The default backend is hugot's pure-Go one (GoMLX "simplego"): nothing to
// install, no cgo. Built with `-tags ORT`, the package can also run the
// model on ONNX Runtime (WithBackend(BackendORT)), which is several times
// faster on CPU and can use a GPU. That build needs what hugot's ORT backend
// needs: the shared library libonnxruntime.so at run time (default
// /usr/lib/libonnxruntime.so, or WithORTLibrary) and, at link time, the
// static library libtokenizers.a of github.com/daulet/tokenizers (in
// /usr/lib, or named through CGO_LDFLAGS=-L<dir>), because hugot's ORT build
// always links its Rust tokenizer. The two backends are not expected to give
// bit-identical vectors; the ORT build is type-checked (go vet -tags ORT) but
// not run by this package's tests, which use the pure-Go backend.
//
// # Over-long texts
//
// A text longer than the model's maximum (max_seq_length, counting [CLS]
// and [SEP]) is never cut silently: Embed returns a *TooLongError, while
// EmbedTruncating keeps the first tokens as sentence-transformers does and
// reports it in Embedding.Truncated.
//
// # Errors
//
// Open reports, in one line naming the file, a missing directory, a
// directory without tokenizer.json, a model file that is not ONNX, an
// unreadable configuration and a pooling mode it does not implement. Embed
// rejects an empty list and empty (or all-space) texts. Nothing in this
// package panics on bad input: panics raised inside the inference engine are
// turned into errors.
//
// It must not know about llama.cpp, templates or statistics.
package embed
