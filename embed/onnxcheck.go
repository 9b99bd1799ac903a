package embed

import (
	"errors"
	"fmt"
	"os"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of onnx.proto (ModelProto and GraphProto) that checkONNX
// looks for.
const (
	modelIRVersion = 1 // ModelProto.ir_version, varint
	modelGraph     = 7 // ModelProto.graph, GraphProto
	graphNode      = 1 // GraphProto.node, repeated NodeProto
	graphInput     = 11
	graphOutput    = 12
)

// checkONNX reports whether the file at path is an ONNX model: a protobuf
// message whose top-level fields all parse, with an ir_version and a graph
// that has at least one node, one input and one output. It reads the wire
// format only, so a truncated or foreign file gives an error instead of a
// half-parsed model (some parsers dereference the missing graph).
func checkONNX(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	notONNX := func(why string) error {
		return fmt.Errorf("%s: not an ONNX model (%s)", path, why)
	}
	if len(data) == 0 {
		return notONNX("empty file")
	}
	var ir int64
	var graph []byte
	if err := walkFields(data, func(num protowire.Number, typ protowire.Type, v uint64, b []byte) {
		switch {
		case num == modelIRVersion && typ == protowire.VarintType:
			ir = int64(v)
		case num == modelGraph && typ == protowire.BytesType:
			graph = b
		}
	}); err != nil {
		return notONNX(err.Error())
	}
	if ir <= 0 || ir > 100 {
		return notONNX("no ir_version")
	}
	if len(graph) == 0 {
		return notONNX("no graph")
	}
	var nodes, inputs, outputs int
	if err := walkFields(graph, func(num protowire.Number, typ protowire.Type, _ uint64, _ []byte) {
		if typ != protowire.BytesType {
			return
		}
		switch num {
		case graphNode:
			nodes++
		case graphInput:
			inputs++
		case graphOutput:
			outputs++
		}
	}); err != nil {
		return notONNX("graph: " + err.Error())
	}
	if nodes == 0 || inputs == 0 || outputs == 0 {
		return notONNX(fmt.Sprintf("graph has %d nodes, %d inputs, %d outputs", nodes, inputs, outputs))
	}
	return nil
}

// walkFields calls f for each top-level field of the protobuf message b:
// v holds a varint or fixed value, bs the bytes of a length-delimited field.
// It fails on the first malformed field or on a group (deprecated, never
// used by ONNX).
func walkFields(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, bs []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if num <= 0 {
			return errors.New("invalid field number")
		}
		b = b[n:]
		var v uint64
		var bs []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			bs, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("unexpected wire type %d", typ)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		f(num, typ, v, bs)
		b = b[n:]
	}
	return nil
}
