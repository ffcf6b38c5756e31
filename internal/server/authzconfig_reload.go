package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/prometheus/client_golang/prometheus"
)

// authzConfigPoll is how often the file is read again even without a
// change event (a watch can miss a change on some file systems), as
// kube-apiserver checks its --authorization-config every minute.
const authzConfigPoll = time.Minute

// watch reloads the chain whenever the file changes, until ctx ends. An
// invalid new file is logged and the current chain kept, as upstream. The
// directory is watched so that a file replaced by rename (as editors and
// ConfigMap volumes do) is seen.
func (c *configuredAuthorizer) watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	if err := w.Add(filepath.Dir(c.path)); err != nil {
		w.Close()
		return err
	}
	go func() {
		defer w.Close()
		tick := time.NewTicker(authzConfigPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-w.Events:
				if filepath.Clean(ev.Name) == filepath.Clean(c.path) {
					c.reload()
				}
			case err := <-w.Errors:
				c.log.Warn("watching the authorization config", "path", c.path, "err", err)
			case <-tick.C:
				c.reload()
			}
		}
	}()
	return nil
}

// reload loads the file again, logging and counting the outcome: a
// failure when the file cannot be read, or its new content is invalid or
// cannot be built; a success when a new chain is in place; nothing when
// the content or configuration is unchanged.
func (c *configuredAuthorizer) reload() {
	applied, err := c.load()
	switch {
	case err != nil:
		c.log.Error("authorization config not reloaded, keeping the current one", "path", c.path, "err", err)
		c.reloads.failed()
	case applied != nil:
		c.log.Info("authorization config reloaded", "path", c.path)
		c.reloads.succeeded(applied)
	}
}

// authzReloadMetrics are kube-apiserver's metrics of --authorization-config
// reloads, with its names, labels and help text:
// apiserver_authorization_config_controller_automatic_reloads_total and
// _automatic_reload_last_timestamp_seconds{status,apiserver_id_hash}, and
// _last_config_info{apiserver_id_hash,hash}, always 1, naming the applied
// file's content. admitd has no apiserver identity, so apiserver_id_hash
// is empty, as in the admission manifest reload metrics.
type authzReloadMetrics struct {
	total     *prometheus.CounterVec
	timestamp *prometheus.GaugeVec
	info      *prometheus.GaugeVec
}

// apiserverIDHash is the apiserver_id_hash label: upstream's hash of the
// apiserver identity, which admitd does not have.
const apiserverIDHash = ""

func newAuthzReloadMetrics(reg prometheus.Registerer) *authzReloadMetrics {
	const ns, sub = "apiserver", "authorization_config_controller"
	m := &authzReloadMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "automatic_reloads_total",
			Help: "[BETA] Total number of automatic reloads of authorization configuration split by status and apiserver identity."},
			[]string{"status", "apiserver_id_hash"}),
		timestamp: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "automatic_reload_last_timestamp_seconds",
			Help: "[BETA] Timestamp of the last automatic reload of authorization configuration split by status and apiserver identity."},
			[]string{"status", "apiserver_id_hash"}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "last_config_info",
			Help: "[ALPHA] Information about the last applied authorization configuration with hash as label, split by apiserver identity."},
			[]string{"apiserver_id_hash", "hash"}),
	}
	reg.MustRegister(m.total, m.timestamp, m.info)
	return m
}

func (m *authzReloadMetrics) failed() { m.observe("failure") }

func (m *authzReloadMetrics) succeeded(data []byte) {
	m.observe("success")
	m.applied(data)
}

func (m *authzReloadMetrics) observe(status string) {
	m.total.WithLabelValues(status, apiserverIDHash).Inc()
	m.timestamp.WithLabelValues(status, apiserverIDHash).SetToCurrentTime()
}

// applied makes data the content named by last_config_info.
func (m *authzReloadMetrics) applied(data []byte) {
	m.info.Reset()
	m.info.WithLabelValues(apiserverIDHash, fmt.Sprintf("sha256:%x", sha256.Sum256(data))).Set(1)
}
