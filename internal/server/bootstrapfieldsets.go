package server

// bootstrapFieldSets is the table of the field sets the objects the server
// writes itself record (apiserver.Config.BootstrapFieldSets), from
// bootstrapfieldsets_gen.go, which TestBootstrapFieldSetsCurrent keeps
// equal to the live computation (-update-field-sets regenerates it).
func bootstrapFieldSets() map[string]string {
	table := make(map[string]string, len(bootstrapFieldSetTable))
	for _, e := range bootstrapFieldSetTable {
		table[e.key] = e.fieldSet
	}
	return table
}

// bootstrapFieldSetEntry is one object's key (apiserver.bootstrapFieldSetKey)
// and its field set (FieldsV1 JSON, "" for none).
type bootstrapFieldSetEntry struct{ key, fieldSet string }
