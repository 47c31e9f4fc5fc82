// Command httpd_go is the Go net/http baseline of examples/httpd.c: the
// same 13-byte keep-alive response on 127.0.0.1.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
)

func main() {
	port := flag.Int("P", 8080, "port")
	flag.Parse()
	body := []byte("Hello, world!")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	})
	log.Fatal(http.ListenAndServe(fmt.Sprintf("127.0.0.1:%d", *port), nil))
}
