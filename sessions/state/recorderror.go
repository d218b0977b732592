package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"
)

// wrongField says what in a record is not what zwarm writes, in the
// record's own terms (its JSON fields), not Go's: "its field turns.n is
// a string, want a number".
func wrongField(err error) string {
	var te *json.UnmarshalTypeError
	var pe *time.ParseError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("its field %s is %s, want %s", te.Field, article(te.Value), jsonKind(te.Type))
	case errors.As(err, &te):
		return fmt.Sprintf("it is %s, want an object", article(te.Value))
	case errors.As(err, &pe):
		return fmt.Sprintf("a time in it, %q, is not an RFC 3339 time", pe.Value)
	}
	return err.Error()
}

// jsonKind is the kind of JSON value a Go type is read from.
func jsonKind(t reflect.Type) string {
	if t == reflect.TypeFor[time.Time]() {
		return "an RFC 3339 time"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}

// article names a JSON value kind as encoding/json reports it ("number",
// "string", "object", "array", "bool", "number 1.5"): "an object", "a boolean".
func article(kind string) string {
	switch kind {
	case "object", "array":
		return "an " + kind
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}
