package event

import (
	"strconv"
	"strings"
)

// DefaultPort is the port of an address that names none.
const DefaultPort = 27017

// SplitAddress splits a server address into the serverHost and serverPort
// fields that log messages and spans carry: "host:port", "[ipv6]:port",
// "host" (port 27017) or a Unix socket path ending in ".sock" (port 0).
// An address it cannot split is returned whole as the host, with port 0,
// so a sink never loses it.
func SplitAddress(address string) (host string, port int) {
	if strings.HasSuffix(address, ".sock") {
		return address, 0
	}
	if strings.HasPrefix(address, "[") {
		end := strings.IndexByte(address, ']')
		if end < 0 {
			return address, 0
		}
		rest := address[end+1:]
		switch {
		case end == 1:
			return address, 0
		case rest == "":
			return address[1:end], DefaultPort
		case rest[0] == ':':
			if p, ok := parsePort(rest[1:]); ok {
				return address[1:end], p
			}
		}
		return address, 0
	}
	i := strings.LastIndexByte(address, ':')
	if i < 0 {
		return address, DefaultPort
	}
	if strings.IndexByte(address[:i], ':') >= 0 {
		// An unbracketed IPv6 literal has no port.
		return address, DefaultPort
	}
	if p, ok := parsePort(address[i+1:]); ok && i > 0 {
		return address[:i], p
	}
	return address, 0
}

func parsePort(s string) (int, bool) {
	if s == "" || len(s) > 5 {
		return 0, false
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	return p, true
}
