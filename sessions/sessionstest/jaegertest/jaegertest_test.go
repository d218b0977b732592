package jaegertest

import (
	"net"
	"net/http"
	"testing"
)

// A port taken between its choice and Jaeger's start makes Jaeger exit:
// it is started again on others, at once, not after a minute's wait.
func TestJaegerStartsAgainOnAPortTakenMeanwhile(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	choose, tries := freePorts, 0
	freePorts = func(n int) ([]int, error) {
		tries++
		ports, err := choose(n)
		if tries == 1 && err == nil {
			ports[1] = taken.Addr().(*net.TCPAddr).Port // the query port
		}
		return ports, err
	}
	defer func() { freePorts = choose }()
	j := Start(t)
	if tries != 2 {
		t.Fatalf("jaeger started after %d choices of ports, want 2", tries)
	}
	resp, err := http.Get(j.Query + "/api/services")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the query service: %v %v", resp, err)
	}
	resp.Body.Close()
}
