package overrides

// compose runs the checks across entries; filled in by compose.go.
func (w *walker) compose() {}
