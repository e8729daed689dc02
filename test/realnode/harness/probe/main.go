// agentry-probe: the HTTP client of the real-node test image. Debian's static busybox cannot resolve
// names (static glibc has no NSS) and its TLS fails the Go apiserver's handshake; a static Go binary
// resolves through /etc/resolv.conf (search domains included) and speaks modern TLS.
//
//	agentry-probe [-timeout 5s] [-ca FILE] [-token FILE] [-post JSON] URL
//
// Prints the response body; exits 0 on a 2xx answer, 1 otherwise.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	timeout := flag.Duration("timeout", 5*time.Second, "whole-request timeout")
	caFile := flag.String("ca", "", "PEM bundle to verify the server with")
	tokenFile := flag.String("token", "", "file holding a bearer token")
	post := flag.String("post", "", "JSON body to POST instead of a GET")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: agentry-probe [-timeout D] [-ca FILE] [-token FILE] [-post JSON] URL")
		os.Exit(2)
	}
	if err := probe(flag.Arg(0), *timeout, *caFile, *tokenFile, *post); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func probe(url string, timeout time.Duration, caFile, tokenFile, post string) error {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("no certificate in %s", caFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	method, body := http.MethodGet, io.Reader(nil)
	if post != "" {
		method, body = http.MethodPost, bytes.NewBufferString(post)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return err
	}
	if post != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if tokenFile != "" {
		token, err := os.ReadFile(tokenFile)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	}
	resp, err := (&http.Client{Transport: transport, Timeout: timeout}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}
