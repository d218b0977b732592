package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zwarm/zwarm/sessions/record"
	"github.com/zwarm/zwarm/sessions/sessionstest"
)

// page is an open page's event stream, as a browser holds it.
type page struct {
	got chan string // the ids of the sessions it was told changed
}

func openPage(b *testing.B, ctx context.Context, sv *serving) *page {
	b.Helper()
	code, body := request(b, sv, "POST", "/api/stream", sv.ro, sv.base, "")
	var tk struct{ Ticket string }
	if json.Unmarshal([]byte(body), &tk); code != 200 {
		b.Fatalf("ticket: %d %s", code, body)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", sv.base+"/api/events?ticket="+tk.Ticket, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		b.Fatalf("stream: %v %v", res, err)
	}
	p := &page{got: make(chan string, 1024)}
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev struct{ ID string }
				json.Unmarshal([]byte(data), &ev)
				if ev.ID != "" {
					p.got <- ev.ID
				}
			}
		}
	}()
	return p
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPages is 100 pages open on a state dir of 1,000 sessions: what
// they cost in memory (heap-MB, the server and the pages' streams, which
// in a browser would be elsewhere), what the process spends while nothing
// changes (idle-cpu-ms over 2 s), and how long a change of a session's
// record takes to reach all 100 (ns/op).
func BenchmarkPages(b *testing.B) {
	const pages, sessionsN = 100, 1000
	sv := serve(b)
	for i := 4; i <= sessionsN; i++ {
		sessionstest.WriteSettledRecord(b, sv.st, i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	open := make([]*page, pages)
	for i := range open {
		open[i] = openPage(b, ctx, sv)
	}
	time.Sleep(500 * time.Millisecond) // the streams settle
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	idle := cpuTime()
	time.Sleep(2 * time.Second)
	idle = cpuTime() - idle
	id := sessionstest.SessionID(1)
	b.ResetTimer()
	for n := range b.N {
		s, err := sv.st.Load(id)
		if err != nil {
			b.Fatal(err)
		}
		s.Error = "change " + string(rune('a'+n%26))
		sessionstest.SetStatus(s, record.StatusFailed)
		if err := sv.st.BumpGeneration(ctx, func() error { return sv.st.Save(s) }); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, p := range open {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for got := range p.got {
					if got == id {
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap-MB-of-100-pages")
	b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(idle.Milliseconds()), "idle-cpu-ms/2s")
}
