// Package yamlx decodes agentkit's YAML files strictly and safely: unknown fields are refused, an empty document is no error, and a decoder panic becomes an error.
package yamlx

import (
	"bytes"
	"errors"
	"io"

	"github.com/goccy/go-yaml"
)

// Decode decodes data into v, refusing fields v does not have. An empty
// document leaves v as it was. Errors keep the decoder's type, so
// yaml.FormatError can show the line; a panic inside the decoder (it has
// some on malformed input, such as a stray tag) is returned as an error.
func Decode(data []byte, v any) (err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	defer func() {
		if recover() != nil {
			err = errors.New("not readable as YAML; check its indentation, brackets and any '!' or '&' characters")
		}
	}()
	err = yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField()).Decode(v)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Format renders a Decode error with its line and the source around it.
func Format(err error) string { return yaml.FormatError(err, false, true) }
