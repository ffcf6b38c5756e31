package apiserver

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
)

// decodeQuery sets the fields of the struct obj points to from query
// parameters named by the fields' json tags, as the connect options
// (PodExecOptions, PodPortForwardOptions, ...) are sent. Unknown parameters
// are ignored.
func decodeQuery(q url.Values, obj any) error {
	v := reflect.ValueOf(obj).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		vals, ok := q[name]
		if name == "" || name == "-" || !ok || len(vals) == 0 {
			continue
		}
		if err := setField(v.Field(i), vals); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func setField(f reflect.Value, vals []string) error {
	switch f.Kind() {
	case reflect.String:
		f.SetString(vals[0])
	case reflect.Bool:
		f.SetBool(queryBool(vals)) // never an error, as upstream's codec
	case reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(vals[0], 10, 64)
		if err != nil {
			return err
		}
		f.SetInt(n)
	case reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if err := setField(p.Elem(), vals); err != nil {
			return err
		}
		f.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(f.Type(), len(vals), len(vals))
		for i, v := range vals {
			if err := setField(s.Index(i), []string{v}); err != nil {
				return err
			}
		}
		f.Set(s)
	}
	return nil
}
