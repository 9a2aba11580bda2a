package mongotest

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/mongoscope/mongoscope/bson"
)

// The ingress request rate limiter of mongod 8.2 and later: a token bucket
// at the front door that refuses commands over its rate with
// IngressRequestRateLimitExceeded, labelled as a retryable overload error
// (the client backpressure specification). It is off unless switched on,
// with SetIngressRateLimit or setParameter
// (ingressRequestRateLimiterEnabled, ingressRequestAdmissionRatePerSec,
// ingressRequestAdmissionBurstSize), as in mongod.

const codeIngressRateLimited = 462

// Labels of an overload error.
const (
	labelSystemOverloaded = "SystemOverloadedError"
	labelRetryable        = "RetryableError"
)

// Defaults of mongod's parameters: a bucket that never runs dry.
const (
	defaultIngressRate  = 1<<31 - 1
	defaultIngressBurst = 1<<31 - 1
)

type ingressLimiter struct {
	on atomic.Bool
	// baseBackoffMS is externalClientBaseBackoffMS: when positive,
	// overload errors carry it as baseBackoffMS.
	baseBackoffMS atomic.Int64

	mu     sync.Mutex
	rate   float64 // tokens per second
	burst  float64 // bucket size
	tokens float64
	last   time.Time
}

// ingressExempt are the commands the limiter lets through: the handshake
// and monitoring, authentication, and the fail point and parameter
// commands a test uses to turn the limiter off again.
var ingressExempt = fieldSet("hello", "isMaster", "ismaster", "saslStart", "saslContinue",
	"authenticate", "logout", "configureFailPoint", "setParameter", "getParameter")

// SetIngressRateLimit switches the ingress request rate limiter on, letting
// through perPerSec commands a second with bursts of up to burst (at least
// one), or off when perSec is zero or less. Over the rate a command fails
// with IngressRequestRateLimitExceeded (462), labelled
// SystemOverloadedError and RetryableError. It sets the same server
// parameters setParameter does.
func (s *Server) SetIngressRateLimit(perSec, burst int) {
	s.params.mu.Lock()
	if s.params.vals == nil {
		s.params.vals = map[string]bson.RawValue{}
	}
	s.params.vals["ingressRequestRateLimiterEnabled"] = paramBool(perSec > 0)
	if perSec > 0 {
		s.params.vals["ingressRequestAdmissionRatePerSec"] = int32Value(int32(min(perSec, defaultIngressRate)))
		s.params.vals["ingressRequestAdmissionBurstSize"] = int32Value(int32(min(max(burst, 1), defaultIngressBurst)))
	}
	s.params.mu.Unlock()
	s.reloadIngress()
}

// reloadIngress reads the limiter's parameters after setParameter or
// SetIngressRateLimit changed them; the bucket starts full.
func (s *Server) reloadIngress() {
	l := &s.ingress
	on, _ := s.param(findParam("ingressRequestRateLimiterEnabled")).BooleanOK()
	rate, _ := s.param(findParam("ingressRequestAdmissionRatePerSec")).AsInt64OK()
	burst, _ := s.param(findParam("ingressRequestAdmissionBurstSize")).AsInt64OK()
	backoff, _ := s.param(findParam("externalClientBaseBackoffMS")).AsInt64OK()
	l.mu.Lock()
	l.rate, l.burst = float64(max(rate, 0)), float64(max(burst, 1))
	l.tokens, l.last = l.burst, time.Now()
	l.mu.Unlock()
	l.baseBackoffMS.Store(max(backoff, 0))
	l.on.Store(on)
}

// limit takes a token for r, or returns the overload error when the
// bucket is empty. Only commands on authenticated connections count when
// the server requires authentication, as in mongod.
func (l *ingressLimiter) limit(s *Server, c *Conn, cmd command, r *Request) error {
	if !l.on.Load() || cmd.flags&cmdHello != 0 || ingressExempt[r.Name] {
		return nil
	}
	if s.opts.Auth && !c.authenticated() {
		return nil
	}
	l.mu.Lock()
	now := time.Now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	ok := l.tokens >= 1
	if ok {
		l.tokens--
	}
	l.mu.Unlock()
	if ok {
		return nil
	}
	e := newError(codeIngressRateLimited, "Rate limiter 'ingressRequestRateLimiter' rate exceeded")
	e.Labels = []string{labelSystemOverloaded, labelRetryable}
	return e
}

// overloaded tells whether labels mark an overload error.
func overloaded(labels []string) bool {
	for _, l := range labels {
		if l == labelSystemOverloaded {
			return true
		}
	}
	return false
}
