package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseCronSchedule checks a CronJob schedule the way upstream's cron
// library (robfig/cron ParseStandard) does: five fields or a descriptor,
// with an optional TZ=/CRON_TZ= prefix. Its error texts follow that
// library's.
func parseCronSchedule(spec string) error {
	if spec == "" {
		return fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		i := strings.Index(spec, " ")
		eq := strings.Index(spec, "=")
		if i < 0 {
			i = len(spec)
		}
		if _, err := time.LoadLocation(spec[eq+1 : i]); err != nil {
			return fmt.Errorf("provided bad location %s: %v", spec[eq+1:i], err)
		}
		spec = strings.TrimSpace(spec[i:])
	}
	if strings.HasPrefix(spec, "@") {
		return parseCronDescriptor(spec)
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	for i, b := range cronBounds {
		if err := parseCronField(fields[i], b); err != nil {
			return err
		}
	}
	return nil
}

func parseCronDescriptor(d string) error {
	switch d {
	case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
		return nil
	}
	if strings.HasPrefix(d, "@every ") {
		if _, err := time.ParseDuration(d[len("@every "):]); err != nil {
			return fmt.Errorf("failed to parse duration %s: %s", d, err)
		}
		return nil
	}
	return fmt.Errorf("unrecognized descriptor: %s", d)
}

type cronBound struct {
	min, max int
	names    map[string]int
}

var cronBounds = []cronBound{
	{0, 59, nil}, // minute
	{0, 23, nil}, // hour
	{1, 31, nil}, // day of month
	{1, 12, map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}},
	{0, 6, map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}},
}

func parseCronField(f string, b cronBound) error {
	for _, expr := range strings.FieldsFunc(f, func(r rune) bool { return r == ',' }) {
		if err := parseCronRange(expr, b); err != nil {
			return err
		}
	}
	return nil
}

func parseCronRange(expr string, b cronBound) error {
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	start, end := b.min, b.max
	if lowAndHigh[0] != "*" && lowAndHigh[0] != "?" {
		var err error
		if start, err = cronValue(lowAndHigh[0], b.names); err != nil {
			return err
		}
		end = start
		switch len(lowAndHigh) {
		case 1:
		case 2:
			if end, err = cronValue(lowAndHigh[1], b.names); err != nil {
				return err
			}
		default:
			return fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	switch len(rangeAndStep) {
	case 1:
	case 2:
		step, err := cronInt(rangeAndStep[1])
		if err != nil {
			return err
		}
		if step <= 0 {
			return fmt.Errorf("step of range should be a positive number: %s", expr)
		}
	default:
		return fmt.Errorf("too many slashes: %s", expr)
	}
	switch {
	case start < b.min:
		return fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, b.min, expr)
	case end > b.max:
		return fmt.Errorf("end of range (%d) above maximum (%d): %s", end, b.max, expr)
	case start > end:
		return fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	}
	return nil
}

func cronValue(s string, names map[string]int) (int, error) {
	if v, ok := names[strings.ToLower(s)]; ok {
		return v, nil
	}
	return cronInt(s)
}

func cronInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", s, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, s)
	}
	return n, nil
}
