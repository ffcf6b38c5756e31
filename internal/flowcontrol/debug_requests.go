package flowcontrol

import (
	"container/list"
	"net/http"
	"strconv"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// requestDesc is who a queued or executing request is, for the request
// dump: its schema, flow distinguisher and digest.
type requestDesc struct {
	schema, distinguisher string
	digest                Digest
}

// requestRow is one request of the dump: its queue and place in it (-1:
// executing, or seated without a queue) and its estimate and times.
type requestRow struct {
	level        string
	queue, index int
	who          requestDesc
	arrived      time.Time
	seats, final int
	linger       time.Duration
	started      time.Time
}

// dumpRequests is upstream's dump_requests: every waiting and executing
// request of the limited levels; ?includeRequestDetails=1 adds who sent it
// and what it asks for.
func (c *Controller) dumpRequests(w http.ResponseWriter, r *http.Request) {
	details := r.URL.Query().Get("includeRequestDetails") != ""
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	headers := []string{"PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue", "FlowDistingsher",
		"ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency", "StartTime"}
	if details {
		headers = append(headers, "UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource")
	}
	writeRow(tw, headers...)
	for _, name := range c.levelNames() {
		l, _ := c.levelNamed(name)
		if l == nil || l.queues == nil {
			continue
		}
		for _, row := range l.queues.requestRows(name) {
			writeRow(tw, row.columns(details)...)
		}
	}
	_ = tw.Flush()
}

func (row *requestRow) columns(details bool) []string {
	cols := []string{row.level, row.who.schema, strconv.Itoa(row.queue), strconv.Itoa(row.index), row.who.distinguisher,
		row.arrived.UTC().Format(time.RFC3339Nano), strconv.Itoa(row.seats), strconv.Itoa(row.final), row.linger.String(),
		row.started.UTC().Format(time.RFC3339Nano)}
	if !details {
		return cols
	}
	d := &row.who.digest
	return append(cols, d.User, d.Verb, d.Path, d.Namespace, d.Name,
		schema.GroupVersion{Group: d.APIGroup, Version: d.APIVersion}.String(), d.Resource, d.Subresource)
}

// requestRows lists a level's requests: each queue's waiting ones in
// order, then its executing ones, then those seated without a queue.
func (qs *queueSet) requestRows(level string) []requestRow {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	var rows []requestRow
	add := func(l *list.List, queue int, waiting bool) {
		i := 0
		for e := l.Front(); e != nil; e = e.Next() {
			t := e.Value.(*ticket)
			row := requestRow{level: level, queue: queue, index: -1, who: t.who, arrived: t.arrived,
				seats: t.seats, final: t.finalSeats, linger: t.linger, started: t.started}
			if waiting {
				row.index = i
			}
			rows = append(rows, row)
			i++
		}
	}
	for i, q := range qs.queues {
		add(&q.waiting, i, true)
		add(&q.running, i, false)
	}
	add(&qs.queueless, -1, false)
	return rows
}
