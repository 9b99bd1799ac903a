package plan

// PaperPresetCPURate is the generation rate recorded for the preset's
// workload on the development machine, used by `fragility plan --preset
// gsm-symbolic-paper` when no rate is given: the README's measured example
// (default model Qwen2.5-Coder-0.5B-Instruct Q4_K_M, --batch 8, 3
// templates × 2 datasets, 1,336 generated tokens in 574 s of generation on
// 2 vCPUs shared with other jobs). On a quiet machine the same model
// generated 36.4 tokens/s at --batch 8 (README, make bench-peer), so this
// rate is a conservative one for a busy machine.
var PaperPresetCPURate = Throughput{TokensPerSecond: 2.3,
	Source: "recorded: the gsm-symbolic-paper example of docs/reading.md, Qwen2.5-Coder-0.5B-Instruct Q4_K_M, --batch 8, 2 vCPUs shared with other jobs; 36.4 on a quiet machine (make bench-peer); give --from or --bench for yours"}

// PaperPresetGPUAssumedRate is the generation rate the plan assumes on a
// GPU when no GPU measurement is given (--gpu-bench). No GPU rate has been
// measured by this project: the figure is llama-bench's tg128 of a 1.1B
// Q4_K_M model (TinyLlama) on an RTX 4090 with llama.cpp's Vulkan backend,
// 762 tokens/s, one sequence (geerlingguy/ai-benchmarks issue #43,
// December 2025). It is an assumption, not a measurement of this harness,
// whose entropy pass runs on the CPU for every generated token.
var PaperPresetGPUAssumedRate = Throughput{TokensPerSecond: 762,
	Source: "ASSUMED, not measured here: llama-bench tg128 of a 1.1B Q4_K_M model on an RTX 4090 (Vulkan), 762 tokens/s, from geerlingguy/ai-benchmarks issue #43; measure with fragility bench --json on the GPU and give it as --gpu-bench"}
