package flowcontrol

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// DebugHandlers are upstream's /debug/api_priority_and_fairness/ dumps, by
// path: each priority level's totals and each queue's state, as
// comma-separated tab-aligned rows.
func (c *Controller) DebugHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/api_priority_and_fairness/dump_priority_levels": http.HandlerFunc(c.dumpPriorityLevels),
		"/debug/api_priority_and_fairness/dump_queues":          http.HandlerFunc(c.dumpQueues),
		"/debug/api_priority_and_fairness/dump_requests":        http.HandlerFunc(c.dumpRequests),
	}
}

func (c *Controller) dumpPriorityLevels(w http.ResponseWriter, _ *http.Request) {
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	writeRow(tw, "PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests", "ExecutingRequests",
		"DispatchedRequests", "RejectedRequests", "TimedoutRequests", "CancelledRequests")
	for _, name := range c.levelNames() {
		l, quiescing := c.levelNamed(name)
		d := l.dump()
		active := 0
		for _, q := range d.queues {
			if q.waiting > 0 {
				active++
			}
		}
		idle := d.waiting == 0 && d.executing == 0
		writeRow(tw, name, strconv.Itoa(active), strconv.FormatBool(idle), strconv.FormatBool(quiescing), strconv.Itoa(d.waiting), strconv.Itoa(d.executing),
			strconv.Itoa(d.dispatched), strconv.Itoa(d.rejected), strconv.Itoa(d.timedOut), strconv.Itoa(d.cancelled))
	}
	_ = tw.Flush()
}

func (c *Controller) dumpQueues(w http.ResponseWriter, _ *http.Request) {
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	writeRow(tw, "PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse", "NextDispatchR",
		"InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum")
	for _, name := range c.levelNames() {
		l, _ := c.levelNamed(name)
		for i, q := range l.dump().queues {
			writeRow(tw, name, strconv.Itoa(i), strconv.Itoa(q.waiting), strconv.Itoa(q.executing), strconv.Itoa(q.seatsInUse),
				q.nextDispatch.String(), strconv.Itoa(q.waitingSeats), strconv.Itoa(q.waitingSeats), q.waitingWork.String())
		}
	}
	_ = tw.Flush()
}

// levelNames are the configured and the quiescing levels, in name order.
func (c *Controller) levelNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropIdleQuiescing()
	names := make([]string, 0, len(c.levels)+len(c.quiescing))
	for n := range c.levels {
		names = append(names, n)
	}
	for n := range c.quiescing {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// levelNamed is a configured or quiescing level.
func (c *Controller) levelNamed(name string) (l *level, quiescing bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if l = c.levels[name]; l != nil {
		return l, false
	}
	l = c.quiescing[name]
	return l, l != nil
}

// dump is a level's queue-set dump; an exempt level has no queues and
// reports its executing requests.
func (l *level) dump() queueSetDump {
	if l == nil {
		return queueSetDump{}
	}
	if l.queues == nil {
		return queueSetDump{executing: int(l.exemptExecuting.Load())}
	}
	return l.queues.dump()
}

func writeRow(w io.Writer, cols ...string) {
	_, _ = io.WriteString(w, strings.Join(cols, ",\t")+"\n")
}
