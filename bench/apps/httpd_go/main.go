// Command httpd_go is the Go net/http baseline of examples/httpd.c: the
// same 13-byte keep-alive response on 127.0.0.1. -trace FILE records a
// runtime/trace execution trace while it serves (bench/scripts/httpd.sh).
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime/trace"
	"syscall"
)

func main() {
	port := flag.Int("P", 8080, "port")
	tracePath := flag.String("trace", "", "record a runtime/trace execution trace into this file until SIGTERM or SIGINT (weft's WEFT_TRACE counterpart)")
	flag.Parse()
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err != nil {
			log.Fatal(err)
		}
		if err := trace.Start(f); err != nil {
			log.Fatal(err)
		}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		go func() {
			<-sig
			trace.Stop()
			f.Close()
			os.Exit(0)
		}()
	}
	body := []byte("Hello, world!")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})
	log.Fatal(http.ListenAndServe(fmt.Sprintf("127.0.0.1:%d", *port), nil))
}
