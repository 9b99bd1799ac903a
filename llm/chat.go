package llm

/*
#include <stdlib.h>
#include "llama.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"
)

// Message is one chat turn. Role is "system", "user" or "assistant".
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Rendered is a chat rendered to a prompt string, with how it was rendered.
type Rendered struct {
	Text string `json:"text"`
	// Template is "model" when the model's own template was applied through
	// llama_chat_apply_template, or "fallback-plain" when the model has no
	// template (or one llama.cpp does not recognise) and FallbackTemplate was
	// used instead.
	Template string `json:"template"`
	// Reason says why the fallback was used; empty otherwise.
	Reason string `json:"reason,omitempty"`
	// Stop holds stop strings the rendering needs: for the plain fallback,
	// the start of a new "User:" turn, which a model without a chat format
	// tends to write on its own.
	Stop []string `json:"stop,omitempty"`
}

// FallbackTemplate describes the plain rendering used when a model has no
// usable chat template: each message as "Role: content" on its own paragraph,
// then "Assistant:" to open the reply.
const FallbackTemplate = "plain: \"System: ...\\n\\nUser: ...\\n\\nAssistant:\""

// RenderChat renders msgs with the model's own chat template
// (llama_chat_apply_template with the template from the GGUF metadata,
// add_ass = true so the prompt ends where the assistant's reply starts). When
// the model has no template or llama.cpp does not support it, it uses
// FallbackTemplate and says so in the result; it never fails silently.
func (m *Model) RenderChat(msgs []Message) (Rendered, error) {
	return m.RenderChatWith(msgs, "")
}

// RenderChatWith is RenderChat with a template chosen by the caller: tmpl is
// the name of one of llama.cpp's built-in templates (e.g. "gemma", "chatml",
// "llama3"; see llama_chat_builtin_templates) or a full template string; ""
// means the model's own. The result's Template is "model", "named:NAME", or
// "fallback-plain".
func (m *Model) RenderChatWith(msgs []Message, tmpl string) (Rendered, error) {
	if len(msgs) == 0 {
		return Rendered{}, fmt.Errorf("render chat: no messages")
	}
	source := "model"
	if tmpl != "" {
		source = "named:" + tmpl
	} else {
		tmpl = m.meta.ChatTemplate
	}
	if tmpl == "" {
		return plainRendered(msgs, "the model has no tokenizer.chat_template"), nil
	}
	ctmpl := C.CString(tmpl)
	defer C.free(unsafe.Pointer(ctmpl))
	cmsgs := (*C.struct_llama_chat_message)(C.malloc(C.size_t(len(msgs)) * C.size_t(unsafe.Sizeof(C.struct_llama_chat_message{}))))
	defer C.free(unsafe.Pointer(cmsgs))
	cs := unsafe.Slice(cmsgs, len(msgs))
	total := 0
	for i, msg := range msgs {
		cs[i].role = C.CString(msg.Role)
		cs[i].content = C.CString(msg.Content)
		total += len(msg.Role) + len(msg.Content)
	}
	defer func() {
		for i := range cs {
			C.free(unsafe.Pointer(cs[i].role))
			C.free(unsafe.Pointer(cs[i].content))
		}
	}()
	n := 2*total + 256
	for {
		buf := (*C.char)(C.malloc(C.size_t(n)))
		got := C.llama_chat_apply_template(ctmpl, cmsgs, C.size_t(len(msgs)), true, buf, C.int32_t(n))
		if got < 0 {
			C.free(unsafe.Pointer(buf))
			if source != "model" {
				return Rendered{}, fmt.Errorf("render chat: llama.cpp does not know the chat template %q", tmpl)
			}
			return plainRendered(msgs, "llama_chat_apply_template does not support this model's template"), nil
		}
		if int(got) > n {
			C.free(unsafe.Pointer(buf))
			n = int(got) + 1
			continue
		}
		s := C.GoStringN(buf, got)
		C.free(unsafe.Pointer(buf))
		return Rendered{Text: s, Template: source}, nil
	}
}

// PlainStops are the stop strings of the plain fallback rendering
// (FallbackTemplate): the start of a new "User:" or "System:" turn.
var PlainStops = []string{"\nUser:", "\nSystem:"}

func plainRendered(msgs []Message, reason string) Rendered {
	return Rendered{Text: plainChat(msgs), Template: "fallback-plain", Reason: reason, Stop: slices.Clone(PlainStops)}
}

func plainChat(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		role := m.Role
		if role != "" {
			role = strings.ToUpper(role[:1]) + role[1:]
		}
		fmt.Fprintf(&b, "%s: %s\n\n", role, m.Content)
	}
	b.WriteString("Assistant:")
	return b.String()
}

// BuiltinChatTemplates returns the names of the chat templates built into
// the pinned llama.cpp (llama_chat_builtin_templates), e.g. "chatml",
// "gemma", "llama3".
func BuiltinChatTemplates() []string {
	n := int(C.llama_chat_builtin_templates(nil, 0))
	if n <= 0 {
		return nil
	}
	ptrs := make([]*C.char, n)
	n = int(C.llama_chat_builtin_templates((**C.char)(unsafe.Pointer(&ptrs[0])), C.size_t(n)))
	out := make([]string, 0, n)
	for _, p := range ptrs[:min(n, len(ptrs))] {
		out = append(out, C.GoString(p))
	}
	return out
}
