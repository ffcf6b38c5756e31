package webhook

import (
	"crypto/tls"
	"log/slog"
	"os"
	"sync"
)

// certReloader serves the key pair in certFile/keyFile and reloads it when
// either file changes: each handshake compares the files' identity, size and
// modification time with those of the last load (a stat each, no read), so
// the handshake after new files are in place serves the new certificate,
// whether they were rewritten or swapped in by a symlink (Kubernetes
// secret volumes). A pair that fails to load (a half-written file, a key
// that does not match) is logged and the previous certificate kept; it is
// tried again when the files change again.
type certReloader struct {
	certFile, keyFile string
	logger            *slog.Logger

	mu                sync.Mutex
	cert              *tls.Certificate
	certStat, keyStat os.FileInfo
	failedC, failedK  os.FileInfo // the stats of the last failed attempt
}

func newCertReloader(certFile, keyFile string, logger *slog.Logger) (*certReloader, error) {
	c := &certReloader{certFile: certFile, keyFile: keyFile, logger: logger}
	cs, ks, err := c.stat()
	if err != nil {
		return nil, err
	}
	if err := c.load(cs, ks); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certReloader) stat() (os.FileInfo, os.FileInfo, error) {
	cs, err := os.Stat(c.certFile)
	if err != nil {
		return nil, nil, err
	}
	ks, err := os.Stat(c.keyFile)
	if err != nil {
		return nil, nil, err
	}
	return cs, ks, nil
}

func (c *certReloader) load(cs, ks os.FileInfo) error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return err
	}
	c.cert, c.certStat, c.keyStat = &cert, cs, ks
	return nil
}

// GetCertificate is the tls.Config hook.
func (c *certReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs, ks, err := c.stat()
	if err != nil {
		c.logger.Warn("serving certificate files unreadable; keeping the loaded certificate", "error", err)
		return c.cert, nil
	}
	if (sameStat(cs, c.certStat) && sameStat(ks, c.keyStat)) || (sameStat(cs, c.failedC) && sameStat(ks, c.failedK)) {
		return c.cert, nil
	}
	if err := c.load(cs, ks); err != nil {
		c.failedC, c.failedK = cs, ks
		c.logger.Warn("reloading the serving certificate failed; keeping the loaded certificate",
			"cert", c.certFile, "key", c.keyFile, "error", err)
		return c.cert, nil
	}
	c.logger.Info("serving certificate reloaded", "cert", c.certFile)
	return c.cert, nil
}

func sameStat(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
