// Command baseline_go runs weft's micro benchmarks with goroutines: create+join, Gosched, and fib with a goroutine per call.
//
// Same options and the same RESULT lines as the C programs under bench/micro
// (see bench/common/bench.h), with impl=go. GOMAXPROCS is set from -w for each
// configuration; -b picks the benchmark.
//
//	baseline_go -b create_join|yield|fib|prio_latency [-n LIST] [-r REPS] [-w LIST] [-k LIST] [--callgrind] [-trace FILE]
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/trace"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// commit is the commit of the build, set by bench/baselines/CMakeLists.txt
// (go build -ldflags "-X main.commit=..."), as bench.h's BENCH_COMMIT.
var commit = "unknown"

type options struct {
	bench     string
	n         []int64
	reps      int
	workers   []int
	wGiven    bool
	threads   []int
	callgrind bool
	trace     string
}

func parseList(s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("bad list element %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseOptions() options {
	var o options
	var n, w, k string
	fs := flag.NewFlagSet(os.Args[0], flag.ExitOnError)
	fs.StringVar(&o.bench, "b", "", "benchmark: create_join | yield | fib | prio_latency (prio.go)")
	fs.StringVar(&n, "n", "", "size: iterations, yields per goroutine or fib argument (list)")
	fs.IntVar(&o.reps, "r", 5, "repetitions")
	fs.StringVar(&w, "w", "1,0", "GOMAXPROCS list, 0 = all CPUs")
	fs.StringVar(&k, "k", "2,100", "goroutines for yield (list)")
	fs.BoolVar(&o.callgrind, "callgrind", false, "one repetition, first -w only, no human lines")
	fs.StringVar(&o.trace, "trace", "", "write a runtime/trace execution trace of the whole run to this file (weft's WEFT_TRACE counterpart)")
	fs.Parse(os.Args[1:])
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "w" {
			o.wGiven = true
		}
	})
	die := func(err error) {
		fmt.Fprintln(os.Stderr, "baseline_go:", err)
		fs.Usage()
		os.Exit(2)
	}
	var err error
	if n != "" {
		if o.n, err = parseList(n); err != nil {
			die(err)
		}
	}
	ws, err := parseList(w)
	if err != nil {
		die(err)
	}
	ks, err := parseList(k)
	if err != nil {
		die(err)
	}
	ncpu := runtime.NumCPU()
	for _, v := range ws {
		x := int(v)
		if x == 0 {
			x = ncpu
		}
		dup := false
		for _, y := range o.workers {
			dup = dup || y == x
		}
		if !dup {
			o.workers = append(o.workers, x)
		}
	}
	for _, v := range ks {
		if v < 1 {
			v = 1
		}
		o.threads = append(o.threads, int(v))
	}
	if o.reps < 1 || o.reps > 1000 || fs.NArg() != 0 {
		die(fmt.Errorf("bad arguments"))
	}
	if o.callgrind {
		o.reps = 1
		o.workers = o.workers[:1]
	}
	return o
}

func (o *options) size(dflt int64) int64 {
	if len(o.n) > 0 {
		return o.n[0]
	}
	return dflt
}

type stats struct{ median, min, max float64 }

// report prints the RESULT line and the human line; samples are ns.
func (o *options) report(bench string, workers int, param string, samples []float64, unit string) stats {
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	r := len(s)
	st := stats{min: s[0], max: s[r-1], median: s[r/2]}
	if r%2 == 0 {
		st.median = (s[r/2-1] + s[r/2]) / 2
	}
	fmt.Printf("RESULT bench=%s impl=go workers=%d param=%s median_ns=%.1f min_ns=%.1f max_ns=%.1f runs=%d commit=%s\n",
		bench, workers, param, st.median, st.min, st.max, r, commit)
	if !o.callgrind {
		if st.median >= 1e6 {
			fmt.Printf("  %-16s %-10s workers=%-3d %-6s %12.3f ms  (min %.3f, max %.3f, %d runs)\n",
				bench, "go", workers, param, st.median/1e6, st.min/1e6, st.max/1e6, r)
		} else {
			fmt.Printf("  %-16s %-10s workers=%-3d %-6s %12.1f %s  (min %.1f, max %.1f, %d runs)\n",
				bench, "go", workers, param, st.median, unit, st.min, st.max, r)
		}
	}
	return st
}

const warmup = 1000

func empty(wg *sync.WaitGroup) { wg.Done() }

//go:noinline
func loopCreateJoin(n int64) {
	var wg sync.WaitGroup
	for i := int64(0); i < n; i++ {
		wg.Add(1)
		go empty(&wg)
		wg.Wait()
	}
}

func benchCreateJoin(o *options) {
	n := o.size(100000)
	if n < 1 {
		n = 1
	}
	for _, w := range o.workers {
		runtime.GOMAXPROCS(w)
		loopCreateJoin(warmup)
		samples := make([]float64, o.reps)
		for r := range samples {
			t0 := time.Now()
			loopCreateJoin(n)
			samples[r] = float64(time.Since(t0).Nanoseconds()) / float64(n)
		}
		o.report("create_join", w, "empty", samples, "ns/op")
	}
}

//go:noinline
func roundYield(k int, n int64) {
	var wg sync.WaitGroup
	wg.Add(k)
	for i := 0; i < k; i++ {
		go func() {
			for j := int64(0); j < n; j++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
}

func benchYield(o *options) {
	workers := []int{1}
	if o.wGiven {
		workers = o.workers
	}
	for _, w := range workers {
		runtime.GOMAXPROCS(w)
		for _, k := range o.threads {
			n := o.size(1000000 / int64(k))
			if n < 1 {
				n = 1
			}
			roundYield(k, warmup/int64(k)+1)
			samples := make([]float64, o.reps)
			for r := range samples {
				t0 := time.Now()
				roundYield(k, n)
				samples[r] = float64(time.Since(t0).Nanoseconds()) / (float64(k) * float64(n))
			}
			o.report("yield", w, strconv.Itoa(k), samples, "ns/yield")
		}
	}
}

// fibGo spawns a goroutine for fib(n-1), computes fib(n-2) itself and waits.
func fibGo(n int64) int64 {
	if n < 2 {
		return n
	}
	var a int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		a = fibGo(n - 1)
		wg.Done()
	}()
	b := fibGo(n - 2)
	wg.Wait()
	return a + b
}

//go:noinline
func fibSerial(n int64) int64 {
	if n < 2 {
		return n
	}
	return fibSerial(n-1) + fibSerial(n-2)
}

func fibExpected(n int64) int64 {
	a, b := int64(0), int64(1)
	for i := int64(0); i < n; i++ {
		a, b = b, a+b
	}
	return a
}

func timeFib(o *options, f func(int64) int64, n int64) []float64 {
	samples := make([]float64, o.reps)
	for r := range samples {
		t0 := time.Now()
		v := f(n)
		samples[r] = float64(time.Since(t0).Nanoseconds())
		if v != fibExpected(n) {
			fmt.Fprintf(os.Stderr, "baseline_go: fib(%d) = %d, wrong\n", n, v)
			os.Exit(1)
		}
	}
	return samples
}

func benchFib(o *options) {
	ns := o.n
	if len(ns) == 0 {
		ns = []int64{30}
	}
	for _, n := range ns {
		param := strconv.FormatInt(n, 10)
		runtime.GOMAXPROCS(1)
		ts := o.report("fib_serial", 1, param, timeFib(o, fibSerial, n), "ns").median
		var t1, tp float64
		p := 1
		for _, w := range o.workers {
			runtime.GOMAXPROCS(w)
			fibGo(15)
			t := o.report("fib", w, param, timeFib(o, fibGo, n), "ns").median
			if w == 1 {
				t1 = t
			}
			if w >= p {
				p, tp = w, t
			}
		}
		if t1 > 0 && !o.callgrind {
			fmt.Printf("  fib(%d) go: T1/Ts = %.2f, speedup T1/T%d = %.2f, Ts/T%d = %.2f\n",
				n, t1/ts, p, t1/tp, p, ts/tp)
		}
	}
}

func main() {
	o := parseOptions()
	if o.trace != "" {
		f, err := os.Create(o.trace)
		if err != nil {
			fmt.Fprintln(os.Stderr, "baseline_go:", err)
			os.Exit(2)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "baseline_go:", err)
			os.Exit(2)
		}
		defer f.Close()
		defer trace.Stop()
	}
	switch o.bench {
	case "create_join":
		benchCreateJoin(&o)
	case "yield":
		benchYield(&o)
	case "fib":
		benchFib(&o)
	case "prio_latency":
		benchPrioLatency(&o)
	default:
		fmt.Fprintln(os.Stderr, "baseline_go: -b create_join|yield|fib|prio_latency is required")
		os.Exit(2)
	}
}
