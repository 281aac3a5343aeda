"""JWT access tokens as another backend checks them, with PyJWT, joserfc and go-jose and no code of ours
(docs/tokens.md): the published key set found through `/.well-known/openid-configuration`'s
neighbour `/.well-known/jwks.json`, the claims of RFC 9068, a forgery refused, and a sign-out
seen in the feed as `session.revoked` for the token's `sid`."""

import json
import os
import shutil
import subprocess
import urllib.request

import jwt
from joserfc import jwt as jose_jwt
from joserfc.jwk import KeySet
from service_harness import api, check, serving

ISSUER = "https://id.321.fit"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def go_jose(base, token):
    """(exit status, claims) of scripts/gojose/verify.go: go-jose from Debian's package, GOPATH mode."""
    environment = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode", GOFLAGS="",
                       GOCACHE=os.path.join(ROOT, ".build", "go-cache"))
    result = subprocess.run(
        [shutil.which("go"), "run", os.path.join(ROOT, "scripts", "gojose", "verify.go"), base + "/.well-known/jwks.json",
         ISSUER, "321fit", token], env=environment, capture_output=True, text=True, timeout=300)
    return result.returncode, json.loads(result.stdout) if result.returncode == 0 else {}
PASSWORD = "violet-harbor-91"


def check_tokens(environment, log_path, reader_key):
    """Starts `ledger serve` with JWT access tokens on the same database and checks them."""
    jwt_environment = dict(environment)
    jwt_environment.update({"LEDGER_ACCESS_TOKEN_FORMAT": "jwt", "LEDGER_ISSUER": ISSUER})
    with serving(jwt_environment, log_path) as base:
        status, session = api(base, "POST", "/auth/email/signup", {"email": "jwt@example.com", "password": PASSWORD})
        check(status == 201, "jwt: sign-up answers a session")
        token = session["access_token"]
        header = jwt.get_unverified_header(token)
        check(header.get("alg") == "ES256" and header.get("typ") == "at+jwt" and "kid" in header, "jwt: an ES256 at+jwt header")

        with urllib.request.urlopen(base + "/.well-known/openid-configuration") as answer:
            configuration = json.load(answer)
        check(configuration == {"issuer": ISSUER, "jwks_uri": ISSUER + "/.well-known/jwks.json"}, "jwt: the OpenID configuration")

        # PyJWT: the key by the token's kid from the key set, then every claim checked.
        signing_key = jwt.PyJWKClient(base + "/.well-known/jwks.json").get_signing_key_from_jwt(token)
        claims = jwt.decode(
            token, signing_key.key, algorithms=["ES256"], audience="321fit", issuer=ISSUER,
            options={"require": ["exp", "iat", "sub", "jti", "sid"]})
        check(claims["sub"] == session["account_id"] and claims["sid"] == session["session_id"], "jwt: PyJWT verifies sub and sid")
        check(claims["amr"] == ["pwd"] and claims["client_id"] == "321fit-app" and claims["email_verified"] is False,
              "jwt: amr, client_id and email_verified")
        check(claims["exp"] - claims["iat"] == session["expires_in"], "jwt: exp is expires_in after iat")

        # joserfc: the same with the whole key set.
        with urllib.request.urlopen(base + "/.well-known/jwks.json") as answer:
            key_set = KeySet.import_key_set(json.load(answer))
        decoded = jose_jwt.decode(token, key_set, algorithms=["ES256"])
        jose_jwt.JWTClaimsRegistry(
            iss={"essential": True, "value": ISSUER}, aud={"essential": True, "value": "321fit"}).validate(decoded.claims)
        check(decoded.claims["sub"] == session["account_id"], "jwt: joserfc verifies it too")

        # go-jose: a Go backend's check.
        check(shutil.which("go") is not None, "jwt: Go is installed, for go-jose")
        status, go_claims = go_jose(base, token)
        check(status == 0 and go_claims.get("sid") == claims["sid"] and go_claims.get("amr") == ["pwd"], "jwt: go-jose verifies it too")

        # A changed claim breaks the signature for the libraries and for the service.
        head, _, signature = token.split(".")
        forged_claims = dict(claims, sub="00000000-0000-4000-8000-000000000000")
        forged_body = jwt.utils.base64url_encode(json.dumps(forged_claims).encode()).decode()
        forged = f"{head}.{forged_body}.{signature}"
        try:
            jwt.decode(forged, signing_key.key, algorithms=["ES256"], audience="321fit", issuer=ISSUER)
            check(False, "jwt: PyJWT refuses a changed claim")
        except jwt.InvalidSignatureError:
            check(True, "jwt: PyJWT refuses a changed claim")
        check(api(base, "GET", "/me", token=forged)[0] == 401, "jwt: the service refuses it (401)")
        check(go_jose(base, forged)[0] == 1, "jwt: go-jose refuses it")

        # A sign-out ends it on the service at once; a backend learns it from the feed.
        check(api(base, "GET", "/me", token=token)[0] == 200, "jwt: the service takes the token")
        check(api(base, "POST", "/auth/logout", token=token)[0] == 204, "jwt: sign-out")
        check(api(base, "GET", "/me", token=token)[0] == 401, "jwt: after sign-out the service refuses it")
        _, page = api(base, "GET", "/events?limit=500", token=reader_key)
        revoked = [event for event in page["events"] if event["type"] == "session.revoked"]
        check(any((event.get("data") or {}).get("session_id") == claims["sid"] for event in revoked),
              "jwt: the feed's session.revoked names the token's sid")
