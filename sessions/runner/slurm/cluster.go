package slurm

import (
	"bufio"
	"context"
	"os"
	"strings"
	"sync"
	"time"
)

// clusterAskLimit bounds asking the controller for the cluster's name when
// no config file says it.
const clusterAskLimit = 3 * time.Second

// clusterNames are the names found, by config file: a process asks once,
// and, when the controller did not say, not again for clusterRetry (a
// reader judging many sessions must not wait on it for each).
var clusterNames sync.Map

// clusterRetry is how long a controller that did not name its cluster is
// not asked again.
const clusterRetry = 10 * time.Second

type clusterName struct {
	name string
	at   time.Time // when the controller did not answer; zero once known
}

// Cluster is the name of the cluster this Client's commands reach (its
// ClusterName), "" when it cannot tell. It is read from the config file
// the commands read (SLURM_CONF, else /etc/slurm/slurm.conf), and, where
// there is none (a configless client), asked of the controller:
//
//	scontrol show config
func (c *Client) Cluster(ctx context.Context) string {
	conf := c.confPath()
	if v, ok := clusterNames.Load(conf); ok {
		if cn := v.(clusterName); cn.at.IsZero() || time.Since(cn.at) < clusterRetry {
			return cn.name
		}
	}
	name := confClusterName(conf)
	if name == "" {
		ctx, cancel := context.WithTimeout(ctx, clusterAskLimit)
		defer cancel()
		out, err := c.run(ctx, "", "scontrol", "show", "config")
		if err != nil {
			clusterNames.Store(conf, clusterName{at: time.Now()}) // asked again later
			return ""
		}
		name = configValue(out, "ClusterName", " = ")
	}
	name = strings.ToLower(name) // as Slurm keeps it
	clusterNames.Store(conf, clusterName{name: name})
	return name
}

// confPath is the config file Slurm's commands read with this Client's
// environment.
func (c *Client) confPath() string {
	conf := os.Getenv("SLURM_CONF")
	for _, kv := range c.opts.Env {
		if v, ok := strings.CutPrefix(kv, "SLURM_CONF="); ok {
			conf = v
		}
	}
	if conf == "" {
		conf = "/etc/slurm/slurm.conf"
	}
	return conf
}

// confClusterName reads ClusterName from a slurm.conf, "" without one.
func confClusterName(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		lines.WriteString(strings.TrimSpace(line) + "\n")
	}
	return configValue(lines.String(), "ClusterName", "=")
}

// configValue is key's value in lines of "key<sep>value", keys compared
// as Slurm compares them, regardless of case.
func configValue(lines, key, sep string) string {
	for _, line := range strings.Split(lines, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), sep)
		if ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
