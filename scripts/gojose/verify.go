// Verifies a JWT access token as a Go backend would, with go-jose (Debian's
// golang-gopkg-square-go-jose.v2-dev) and no code of the ledger's: the key set from the
// service's /.well-known/jwks.json, the key by the token's kid, ES256 only, then issuer,
// audience and expiry. Prints the claims as JSON; exits 1 when the token does not verify.
//
//	go run scripts/gojose/verify.go JWKS_URL ISSUER AUDIENCE TOKEN
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	jose "gopkg.in/square/go-jose.v2"
	"gopkg.in/square/go-jose.v2/jwt"
)

type accessClaims struct {
	SessionID string   `json:"sid"`
	Methods   []string `json:"amr"`
}

func main() {
	if err := verify(os.Args[1], os.Args[2], os.Args[3], os.Args[4]); err != nil {
		fmt.Fprintln(os.Stderr, "gojose:", err)
		os.Exit(1)
	}
}

func verify(jwksURL, issuer, audience, token string) error {
	answer, err := http.Get(jwksURL)
	if err != nil {
		return err
	}
	defer answer.Body.Close()
	var keys jose.JSONWebKeySet
	if err := json.NewDecoder(answer.Body).Decode(&keys); err != nil {
		return err
	}
	parsed, err := jwt.ParseSigned(token)
	if err != nil {
		return err
	}
	if len(parsed.Headers) != 1 || parsed.Headers[0].Algorithm != string(jose.ES256) {
		return fmt.Errorf("not an ES256 token")
	}
	found := keys.Key(parsed.Headers[0].KeyID)
	if len(found) != 1 {
		return fmt.Errorf("no key %q in the key set", parsed.Headers[0].KeyID)
	}
	var standard jwt.Claims
	var access accessClaims
	if err := parsed.Claims(found[0].Key, &standard, &access); err != nil {
		return err
	}
	if err := standard.ValidateWithLeeway(jwt.Expected{Issuer: issuer, Audience: jwt.Audience{audience}, Time: time.Now()}, 0); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]interface{}{"sub": standard.Subject, "sid": access.SessionID, "amr": access.Methods})
}
