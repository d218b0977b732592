package slurm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zwarm/zwarm/sessions/config"
)

// resourceFlags are the sbatch options of a job's resources, by key.
var resourceFlags = map[string]string{
	"partition": "--partition", "time": "--time", "cpus": "--cpus-per-task", "mem": "--mem",
	"gres": "--gres", "account": "--account", "qos": "--qos", "constraint": "--constraint",
}

var (
	memRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+[KMGT]?$`) })
	gresRe = sync.OnceValue(func() *regexp.Regexp {
		// name[:type][:count], comma separated: a type or a count never
		// starts with "-" ("gpu:-1"), which sbatch would refuse.
		item := `[A-Za-z0-9_]+(:[A-Za-z0-9_.][A-Za-z0-9_.-]*)?(:[0-9]+[kKmMgGtT]?)?`
		return regexp.MustCompile(`^` + item + `(,` + item + `)*$`)
	})
	wordRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.,:@&|\[\]*+-]+$`) })
	slurmTm = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+-)?[0-9]+(:[0-9]+){0,2}$`) })
)

// CheckResources refuses what sbatch would be asked wrongly: an unknown
// key, a time that is no time, CPUs that are no number, memory, GPUs or
// names that sbatch would not take.
func (r *jobs) CheckResources(res map[string]string) error {
	_, err := resourceArgs(res)
	return err
}

// resourceArgs are the sbatch options of res, its time in Slurm's form.
func resourceArgs(res map[string]string) ([]string, error) {
	var args []string
	for _, k := range config.ResourceKeys {
		v, ok := res[k]
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		bad := func(want string) error {
			return config.Invalidf("slurm %s = %q: want %s", k, v, want)
		}
		switch k {
		case "time":
			t, err := slurmTime(v)
			if err != nil {
				return nil, bad(`a time as sbatch --time takes it ("90", "2:00:00", "1-0") or a duration ("2h", "90m")`)
			}
			v = t
		case "cpus":
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				return nil, bad("a number of CPUs above 0")
			}
		case "mem":
			if !memRe().MatchString(v) {
				return nil, bad(`memory as sbatch --mem takes it ("8G", "500M")`)
			}
		case "gres":
			if !gresRe().MatchString(v) {
				return nil, bad(`generic resources as sbatch --gres takes them ("gpu:1", "gpu:a100:2")`)
			}
		default:
			if !wordRe().MatchString(v) {
				return nil, bad("a name sbatch takes, without spaces")
			}
		}
		args = append(args, resourceFlags[k]+"="+v)
	}
	for k := range res {
		if _, ok := resourceFlags[k]; !ok {
			return nil, config.Invalidf("slurm has no resource %q: ask for %s", k, strings.Join(config.ResourceKeys, ", "))
		}
	}
	return args, nil
}

// slurmTime is a time limit in sbatch's forms, or a Go duration ("2h",
// "1h30m") turned into minutes, rounded up.
func slurmTime(v string) (string, error) {
	if slurmTm().MatchString(v) {
		return v, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return "", fmt.Errorf("no time")
	}
	return strconv.Itoa(int((d + time.Minute - 1) / time.Minute)), nil
}
