package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/zwarm/zwarm/sessions/config"
)

// prop is one property of an arguments schema.
type prop map[string]any

func str(desc string) prop { return prop{"type": "string", "description": desc} }
func num(desc string) prop { return prop{"type": "number", "description": desc} }
func integer(desc string) prop {
	return prop{"type": "integer", "description": desc}
}
func boolean(desc string) prop { return prop{"type": "boolean", "description": desc} }
func enum(desc string, values ...string) prop {
	return prop{"type": "string", "enum": values, "description": desc}
}
func strArray(desc string) prop {
	return prop{"type": "array", "items": prop{"type": "string"}, "description": desc}
}

// resources is an object of config.ResourceKeys, each a string.
func resources(desc string) prop {
	props := map[string]prop{}
	for _, k := range config.ResourceKeys {
		props[k] = prop{"type": "string"}
	}
	return prop{"type": "object", "properties": props, "additionalProperties": false, "description": desc}
}

// object is the schema of an arguments object.
func object(props map[string]prop, required ...string) json.RawMessage {
	if required == nil {
		required = []string{}
	}
	b, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
	if err != nil {
		panic(err) // the schemas are literals: a failure is a programming error
	}
	return b
}

// decode reads a tool's arguments strictly: an unknown parameter or a
// wrong type is an error naming the parameter and listing the known ones.
func decode(tool string, args json.RawMessage, into any, schema json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		msg := err.Error()
		if ute, ok := err.(*json.UnmarshalTypeError); ok {
			msg = fmt.Sprintf("parameter %s must be of type %s, not a JSON %s", ute.Field, schemaType(schema, ute.Field), ute.Value)
		}
		return fmt.Errorf("bad arguments for %s: %s (its parameters: %s)", tool, strings.TrimPrefix(msg, "json: "), paramNames(schema))
	}
	return nil
}

func schemaProps(schema json.RawMessage) map[string]struct {
	Type string `json:"type"`
} {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	json.Unmarshal(schema, &s)
	return s.Properties
}

func schemaType(schema json.RawMessage, field string) string {
	if p, ok := schemaProps(schema)[field]; ok && p.Type != "" {
		return p.Type
	}
	return "value of another type"
}

func paramNames(schema json.RawMessage) string {
	props := schemaProps(schema)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
