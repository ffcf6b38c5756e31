package lib

import "io"

type Level int

const (
	Low Level = iota
	High
	hidden
)

const Name = "lib"

var ErrX = io.EOF

var Count int

type Plugin struct {
	Name  string
	inner int
	io.Reader
	Ready, Done bool
	Hook        func(n int) error
}

type Handler interface {
	Handles(op string) bool
	io.Closer
	private()
}

type Alias = Plugin

type List[T any] []T

func New(name string, opts ...int) (*Plugin, error) { return nil, nil }

func (p *Plugin) Run(r io.Reader, n, m int) error { return nil }

func (p Plugin) unexported() {}

type unexportedType struct{}

func (unexportedType) Exported() {}

func Map[K comparable, V any](m map[K]V) []K { return nil }
