package main

// The Go counterpart of bench_prio's latency under a flood (bench/micro/prio.c):
// goroutines have no priorities, so the requests rely on Go's preemption
// (sysmon asks a goroutine that ran 10 ms to yield, by signal since Go 1.14).
//
// GOMAXPROCS=2; 20 flood goroutines compute 100 ms at a time (reading the
// clock about every microsecond, then runtime.Gosched); 64 request
// goroutines each wait on a channel of their own; a waker goroutine locked
// to its own OS thread (the nearest Go has to a plain kernel thread; it
// still needs a P to run) sends to one about 5,000 times a second,
// skipping a request still being served, and each request computes 10 us.
// BENCH_PRIO_DUMP=DIR writes the last run's sorted samples (ns, one a
// line) to DIR/go-normal.txt for bench/scripts/prio-plot.py.

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

const (
	prioFlood    = 20
	prioFloodDur = 100 * time.Millisecond
	prioHigh     = 64
	prioWake     = 200 * time.Microsecond // 5,000 wake-ups a second
	prioWork     = 10 * time.Microsecond
)

var sink atomic.Uint64

// spin computes for about d, reading the clock about every microsecond.
func spin(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(0)
	for time.Now().Before(end) {
		for i := 0; i < 256; i++ {
			x++
		}
	}
	sink.Add(x)
}

type high struct {
	ch      chan struct{}
	wokenAt atomic.Int64 // the waker's clock when it sent
	busy    atomic.Int32 // 1 from the send until the request is served
}

func prioOnce(secs float64) []float64 {
	var stop atomic.Bool
	var mu sync.Mutex
	lat := make([]float64, 0, 1<<16)
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) }
	var wg sync.WaitGroup
	highs := make([]high, prioHigh)
	for i := range highs {
		h := &highs[i]
		h.ch = make(chan struct{}, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range h.ch {
				if stop.Load() {
					return
				}
				d := now() - h.wokenAt.Load()
				mu.Lock()
				lat = append(lat, float64(d))
				mu.Unlock()
				spin(prioWork)
				h.busy.Store(0)
			}
		}()
	}
	for i := 0; i < prioFlood; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				spin(prioFloodDur)
				runtime.Gosched()
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		end := now() + int64(secs*1e9)
		next := now()
		for i := 0; now() < end; i++ {
			next += int64(prioWake)
			if d := next - now(); d > 0 {
				time.Sleep(time.Duration(d))
			} else {
				// Behind: drop the missed slots rather than post them at
				// once (the same rule as weft's and the pthread version).
				next = now()
			}
			h := &highs[i%prioHigh]
			if h.busy.Load() != 0 {
				continue
			}
			h.busy.Store(1)
			h.wokenAt.Store(now())
			h.ch <- struct{}{}
		}
		close(done)
	}()
	<-done
	stop.Store(true)
	for i := range highs {
		close(highs[i].ch)
	}
	wg.Wait()
	sort.Float64s(lat)
	return lat
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[int(p*float64(len(v)-1))]
}

func benchPrioLatency(o *options) {
	secs := float64(o.size(1))
	runtime.GOMAXPROCS(2)
	var p [3][]float64
	for r := 0; r < o.reps; r++ {
		lat := prioOnce(secs)
		v := [3]float64{pct(lat, 0.50), pct(lat, 0.99), pct(lat, 0.999)}
		fmt.Printf("  run: go flood=normal samples=%d p50=%.1fus p99=%.1fus p99.9=%.1fus\n",
			len(lat), v[0]/1e3, v[1]/1e3, v[2]/1e3)
		for k := range v {
			p[k] = append(p[k], v[k])
		}
		if dir := os.Getenv("BENCH_PRIO_DUMP"); dir != "" && r == o.reps-1 {
			f, err := os.Create(filepath.Join(dir, "go-normal.txt"))
			if err != nil {
				fmt.Fprintln(os.Stderr, "baseline_go:", err)
				os.Exit(1)
			}
			for _, x := range lat {
				fmt.Fprintf(f, "%.0f\n", x)
			}
			f.Close()
		}
	}
	med := func(v []float64) float64 {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		if len(s)%2 == 0 {
			return (s[len(s)/2-1] + s[len(s)/2]) / 2
		}
		return s[len(s)/2]
	}
	m := [3]float64{med(p[0]), med(p[1]), med(p[2])}
	fmt.Printf("RESULT bench=prio_latency impl=go workers=2 param=flood=normal p50_ns=%.0f p99_ns=%.0f p999_ns=%.0f runs=%d commit=%s\n",
		m[0], m[1], m[2], o.reps, commit)
	fmt.Printf("  prio_latency %-12s flood=%-7s p50 %8.1f us  p99 %8.1f us  p99.9 %8.1f us\n",
		"go", "normal", m[0]/1e3, m[1]/1e3, m[2]/1e3)
}
