//go:build race

package controllers

// raceEnabled: the race detector's instrumentation deepens every stack.
const raceEnabled = true
