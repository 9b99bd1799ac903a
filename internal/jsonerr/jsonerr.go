// Package jsonerr words the errors of encoding/json for the user: a type
// mismatch names the field and the JSON kinds (string, number, boolean,
// list, object), never a Go type, and a syntax error gives its line.
package jsonerr

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// Describe returns err, from decoding data with encoding/json, as one
// phrase without Go type names, and the 1-based line of data it points at
// (0 when it points nowhere): `field "models" has the wrong type (a
// number, want a list)`, `JSON syntax error: invalid character ...`, `unknown field
// "x"`. Any other error is returned as its text.
func Describe(data []byte, err error) (string, int) {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return "JSON syntax error: " + se.Error(), Line(data, se.Offset)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return "the JSON is " + article(te.Value) + ", want " + Kind(te.Type), Line(data, te.Offset)
		}
		return "field \"" + field + "\" has the wrong type (" + article(te.Value) + ", want " + Kind(te.Type) + ")", Line(data, te.Offset)
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return msg, 0
}

// Kind names the JSON value a Go type decodes from: "a string", "a
// number", "a boolean", "a list", "an object".
func Kind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if t.Kind() != reflect.Float32 && t.Kind() != reflect.Float64 {
			return "a whole number"
		}
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value"
}

// KindOf names the JSON kind of a value decoded into any: "null", "a
// boolean", "a number", "a string", "a list", "an object".
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64, json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// article puts "a" or "an" before a JSON kind as encoding/json names it
// (string, number, bool, array, object).
func article(v string) string {
	switch v {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "bool":
		return "a boolean"
	}
	return "a " + v
}

// Line returns the 1-based line of byte offset off in data.
func Line(data []byte, off int64) int {
	off = max(0, min(off, int64(len(data))))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// Text is Describe's phrase alone, for a caller that names the place
// itself (a line of a JSON Lines file).
func Text(data []byte, err error) string {
	msg, _ := Describe(data, err)
	return msg
}
