package hpa

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

// Without behavior: at most double the replicas (4 at least), within
// min/max.
func TestLimitWithRules(t *testing.T) {
	cases := []struct {
		current, desired, min, max int32
		want                       int32
		reason                     string
	}{
		{3, 10, 1, 20, 6, "ScaleUpLimit"},
		{1, 10, 1, 20, 4, "ScaleUpLimit"},
		{3, 10, 1, 5, 5, "TooManyReplicas"},
		{3, 0, 2, 5, 2, "TooFewReplicas"},
		{3, 4, 1, 5, 4, "DesiredWithinRange"},
	}
	for _, tc := range cases {
		got, reason, _ := limitWithRules(tc.current, tc.desired, tc.min, tc.max)
		if got != tc.want || reason != tc.reason {
			t.Errorf("%+v: got %d %s", tc, got, reason)
		}
	}
}

// The default behavior's policies (scale up: 4 pods or 100% per 15 s,
// the larger; scale down: 100% per 15 s) and others, counting the scale
// events of each policy's period.
func TestLimitWithBehavior(t *testing.T) {
	maxSelect, minSelect, disabled := autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect
	defaultUp := &autoscalingv2.HPAScalingRules{SelectPolicy: &maxSelect, Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15}, {Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}
	defaultDown := &autoscalingv2.HPAScalingRules{SelectPolicy: &maxSelect, Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}}}
	twoPerMinute := &autoscalingv2.HPAScalingRules{SelectPolicy: &maxSelect, Policies: []autoscalingv2.HPAScalingPolicy{
		{Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 60}}}
	minOfTwo := &autoscalingv2.HPAScalingRules{SelectPolicy: &minSelect, Policies: defaultUp.Policies}
	off := &autoscalingv2.HPAScalingRules{SelectPolicy: &disabled}
	recent := []scaleEvent{{change: 4, at: time.Now().Add(-5 * time.Second)}}
	cases := []struct {
		name                       string
		up, down                   *autoscalingv2.HPAScalingRules
		ups, downs                 []scaleEvent
		current, desired, min, max int32
		want                       int32
		reason                     string
	}{
		{"default scale up: the larger policy", defaultUp, defaultDown, nil, nil, 3, 20, 1, 100, 7, "ScaleUpLimit"},
		{"default scale up: 100% of many", defaultUp, defaultDown, nil, nil, 10, 50, 1, 100, 20, "ScaleUpLimit"},
		{"scale up counts the period's events", defaultUp, defaultDown, recent, nil, 7, 20, 1, 100, 7, "ScaleUpLimit"},
		{"scale up: max first", defaultUp, defaultDown, nil, nil, 3, 20, 1, 5, 5, "TooManyReplicas"},
		{"select Min", minOfTwo, defaultDown, nil, nil, 3, 20, 1, 100, 6, "ScaleUpLimit"},
		{"scale up disabled", off, defaultDown, nil, nil, 5, 8, 1, 100, 5, "ScaleUpLimit"},
		{"default scale down: to min", defaultUp, defaultDown, nil, nil, 10, 1, 1, 100, 1, "DesiredWithinRange"},
		{"scale down 2 a minute", defaultUp, twoPerMinute, nil, nil, 10, 1, 1, 100, 8, "ScaleDownLimit"},
		{"scale down counts the period's events", defaultUp, twoPerMinute, nil, []scaleEvent{{change: 2, at: time.Now().Add(-30 * time.Second)}}, 8, 1, 1, 100, 8, "ScaleDownLimit"},
		{"scale down disabled", defaultUp, off, nil, nil, 5, 1, 1, 100, 5, "ScaleDownLimit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Controller{history: map[string]*history{"k": {scaleUps: tc.ups, scaleDowns: tc.downs}}}
			b := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: tc.up, ScaleDown: tc.down}
			got, reason, _ := c.limitWithBehavior("k", b, tc.current, tc.desired, tc.min, tc.max)
			if got != tc.want || reason != tc.reason {
				t.Errorf("got %d %s, want %d %s", got, reason, tc.want, tc.reason)
			}
		})
	}
}

// Without behavior, a scale down waits for the window's highest
// recommendation; an older one is replaced by the new one.
func TestStabilizeKeepsTheWindowsHighest(t *testing.T) {
	c := &Controller{downscale: 5 * time.Minute, history: map[string]*history{"k": {recommendations: []recommendation{
		{8, time.Now().Add(-time.Minute)}, {9, time.Now().Add(-10 * time.Minute)}}}}}
	if got := c.stabilize("k", 3); got != 8 {
		t.Fatalf("stabilized %d, want 8", got)
	}
	if recs := c.history["k"].recommendations; len(recs) != 2 || recs[1].replicas != 3 {
		t.Fatalf("recommendations %+v: want the old one replaced by 3", recs)
	}
}

// With behavior: between the scale-up window's lowest and the scale-down
// window's highest recommendation.
func TestStabilizeWithBehavior(t *testing.T) {
	c := &Controller{history: map[string]*history{"k": {recommendations: []recommendation{
		{4, time.Now().Add(-30 * time.Second)}, {9, time.Now().Add(-2 * time.Minute)}}}}}
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)},
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300)}}
	got, reason, _ := c.stabilizeWithBehavior("k", b, 5, 10)
	if got != 5 || reason != "ScaleUpStabilized" {
		t.Errorf("scale up to 10 from 5: got %d %s, want 5 (the last minute's lowest is 4)", got, reason)
	}
	got, reason, _ = c.stabilizeWithBehavior("k", b, 5, 2)
	if got != 5 || reason != "ScaleDownStabilized" {
		t.Errorf("scale down to 2 from 5: got %d %s, want 5 (the window's highest, 10, is above current)", got, reason)
	}
}
