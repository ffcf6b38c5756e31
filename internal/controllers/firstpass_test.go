package controllers

import (
	"context"
	"errors"
	"testing"
)

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestFirstPassClosesOnceEveryListedKeyWasTried(t *testing.T) {
	p := newFirstPass()
	sync := p.syncing(func(_ context.Context, key string) error {
		if key == "refused" {
			return errors.New("a webhook refused the write")
		}
		return nil
	})
	ctx := context.Background()
	_ = sync(ctx, "before-the-list") // an event's key before the list: not waited for
	p.list([]string{"default", "refused"})
	if isClosed(p.Done()) {
		t.Fatal("done before any listed key was tried")
	}
	_ = sync(ctx, "default")
	_ = sync(ctx, "default")
	if isClosed(p.Done()) {
		t.Fatal("done while a listed key was never tried")
	}
	if err := sync(ctx, "refused"); err == nil {
		t.Fatal("the wrapped sync's error was lost")
	}
	if !isClosed(p.Done()) {
		t.Fatal("not done after every listed key was tried (a failed try counts)")
	}
	p.list([]string{"later"}) // a relist: not waited for, and no second close
	_ = sync(ctx, "later")
}

func TestFirstPassOfAnEmptyListIsDone(t *testing.T) {
	p := newFirstPass()
	p.list(nil)
	if !isClosed(p.Done()) {
		t.Fatal("an empty first list left the pass open")
	}
}
