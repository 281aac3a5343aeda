"""Passkeys in a real browser: Chromium's virtual authenticator (CTAP2, internal,
resident keys, user verification) driven by selenium, registering and signing in from a page on
the service's own origin with `PublicKeyCredential.parseCreationOptionsFromJSON`,
`parseRequestOptionsFromJSON` and `toJSON()`, exactly as a web app would.

Then what an attacker would send instead, each refused: a replayed answer, an origin the service
does not list, a flag cleared, another passkey's signature under this one's id. A passkey-only
account cannot remove its passkey; a passkey re-auth changes the password. Screenshots of each
step go to .build/screenshots/passkey-*.png.
"""

import base64
import json
import os

from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
from service_harness import api, check

# The demo panel the page shows: the steps and what the service answered.
PANEL = """
document.title = 'Passkeys · Account Ledger';
document.body.innerHTML = '<main style="font:16px system-ui;margin:24px;max-width:380px">'
  + '<h1 style="font-size:22px">Passkeys</h1><p id="who"></p><ol id="steps" style="padding-left:20px"></ol></main>';
"""

STEP = "const li = document.createElement('li'); li.textContent = arguments[0]; li.style.margin = '8px 0';"\
       " document.getElementById('steps').appendChild(li);"

# Registration: options with the access token and re-auth grant, `navigator.credentials.create`, POST.
REGISTER = """
const [access, grant, name, done] = arguments;
try {
  const headers = {'Authorization': 'Bearer ' + access, 'X-Reauth-Token': grant, 'Content-Type': 'application/json'};
  const options = await (await fetch('/me/passkeys/options', {method: 'POST', headers})).json();
  const credential = await navigator.credentials.create({publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options)});
  const response = await fetch('/me/passkeys', {method: 'POST', headers, body: JSON.stringify({credential: credential.toJSON(), name})});
  done({status: response.status, body: await response.json(), user: options.user});
} catch (error) { done({error: String(error)}); }
"""

# An assertion for `optionsPath` (sign-in or re-auth), as `toJSON()` gives it, not sent yet;
# `allow` narrows which of the authenticator's passkeys answers (the page's choice, not the service's).
ASSERT = """
const [optionsPath, access, allow, done] = arguments;
try {
  const headers = access ? {'Authorization': 'Bearer ' + access} : {};
  const options = await (await fetch(optionsPath, {method: 'POST', headers})).json();
  if (allow) options.allowCredentials = allow.map(id => ({type: 'public-key', id}));
  const credential = await navigator.credentials.get({publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options)});
  done({credential: credential.toJSON(), allow: options.allowCredentials.length});
} catch (error) { done({error: String(error)}); }
"""

# Sends a credential from the page, as the web app would.
SEND = """
const [path, access, credential, done] = arguments;
const headers = {'Content-Type': 'application/json'};
if (access) headers['Authorization'] = 'Bearer ' + access;
const response = await fetch(path, {method: 'POST', headers, body: JSON.stringify({credential})});
done({status: response.status, body: await response.json()});
"""


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def run_async(driver, script, *arguments):
    driver.set_script_timeout(30)
    return driver.execute_async_script(script, *arguments)


def step(driver, text, shot=None):
    driver.execute_script(STEP, text)
    if shot:
        driver.save_screenshot(os.path.join(shot[0], f"passkey-{shot[1]}.png"))


def passkeys(driver, origin, latest, shots):
    """`origin`: the service as the browser reaches it (`http://localhost:PORT`, the RP id's origin)."""
    authenticator = driver.add_virtual_authenticator(
        VirtualAuthenticatorOptions(
            protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True, has_user_verification=True,
            is_user_verified=True))
    # A page on the service's own origin (the expired link page; any of its pages would do).
    driver.get(origin + "/verify-email?token=none")
    driver.execute_script(PANEL)

    status, session = api(origin, "POST", "/auth/email/signup", {"email": "kai@example.com", "password": "violet-harbor-91"})
    check(status == 201, "passkeys: sign-up")
    access = session.get("access_token")
    check(api(origin, "POST", "/auth/reauth/email-link", token=access)[0] == 202, "passkeys: a re-auth link is sent")
    status, granted = api(origin, "POST", "/auth/reauth/email-link/confirm", {"token": latest("reauth_link", "kai@example.com")["token"]})
    grant = granted.get("reauth_token")
    check(status == 200 and grant, "passkeys: verify it's you by the email link")
    driver.execute_script("document.getElementById('who').textContent = arguments[0]", "Signed in as kai@example.com")

    registered = run_async(driver, REGISTER, access, grant, "Chromium")
    check(registered.get("status") == 201 and registered["body"].get("name") == "Chromium",
          f"passkeys: Chromium registers a passkey from parseCreationOptionsFromJSON and toJSON ({registered.get('error') or registered.get('status')})")
    stored = driver.get_credentials()
    check(len(stored) == 1 and stored[0].is_resident_credential and stored[0].rp_id == "localhost",
          "passkeys: the authenticator holds one discoverable credential for the RP id")
    check(stored and b64url(b64url_decode(registered.get("user", {}).get("id", ""))) == b64url(b64url_decode(stored[0].user_handle or "")),
          "passkeys: the credential carries the account's opaque user handle")
    step(driver, "Passkey “Chromium” registered (virtual authenticator: CTAP2, internal, user verification)", (shots, "registered"))
    status, hub = api(origin, "GET", "/me/auth-methods", token=access)
    check(hub.get("passkeys") == 1, "passkeys: the hub counts it")

    # Sign in with it: discoverable, nothing typed.
    asserted = run_async(driver, ASSERT, "/auth/passkey/options", None, None)
    check("credential" in asserted and asserted.get("allow") == 0, f"passkeys: Chromium answers the sign-in options ({asserted.get('error')})")
    credential = asserted.get("credential", {})
    signed_in = run_async(driver, SEND, "/auth/passkey/login", None, credential)
    check(signed_in["status"] == 200 and signed_in["body"].get("access_token"), "passkeys: the assertion signs in")
    step(driver, "Signed in with the passkey: a session, no code asked", (shots, "signed-in"))

    # What an attacker would send instead.
    check(run_async(driver, SEND, "/auth/passkey/login", None, credential)["status"] == 401, "passkeys: the same answer again is refused (one-use challenge)")
    for what, alter in tampered(credential).items():
        fresh = run_async(driver, ASSERT, "/auth/passkey/options", None, None)["credential"]
        answer = run_async(driver, SEND, "/auth/passkey/login", None, alter(fresh))
        check(answer["status"] == 401 and answer["body"].get("error") == "invalid_credential", f"passkeys: {what} is refused")
    mine = credential["id"]
    other = second_account(driver, origin, latest)
    theirs_id = next((c.id.rstrip("=") for c in driver.get_credentials() if c.id.rstrip("=") != mine), None)
    theirs = run_async(driver, ASSERT, "/auth/passkey/options", None, [theirs_id]).get("credential", {})
    swapped = dict(theirs, id=mine, rawId=mine)
    check(other and theirs_id and run_async(driver, SEND, "/auth/passkey/login", None, swapped)["status"] == 401,
          "passkeys: another passkey's signature under this one's id is refused")
    check(run_async(driver, SEND, "/auth/passkey/login", None, theirs)["status"] == 401,
          "passkeys: the answer whose id was swapped spent its challenge")
    mine_again = run_async(driver, ASSERT, "/auth/passkey/options", None, [mine]).get("credential", {})
    check(run_async(driver, SEND, "/auth/passkey/login", None, mine_again)["status"] == 200,
          "passkeys: with two passkeys on the device, each signs in to its own account")
    step(driver, "Replayed, altered and foreign answers: all refused", (shots, "refused"))

    # Verify it's you with the passkey, then change the password with that grant.
    reauth = run_async(driver, ASSERT, "/auth/reauth/passkey/options", access, None)
    check(reauth.get("allow", 0) >= 1, "passkeys: re-auth options list the account's passkeys")
    granted = run_async(driver, SEND, "/auth/reauth/passkey", access, reauth.get("credential"))
    grant = granted["body"].get("reauth_token")
    check(granted["status"] == 200 and grant, "passkeys: a passkey re-auth grants")
    status, _ = api(origin, "POST", "/auth/password/change", {"new_password": "copper-lantern-77"}, token=access, reauth=grant)
    check(status == 200, "passkeys: the passkey's grant changes the password")
    status, _ = api(origin, "POST", "/auth/email/login", {"email": "kai@example.com", "password": "copper-lantern-77"})
    check(status == 200, "passkeys: the new password signs in")
    step(driver, "Verified with the passkey; password changed", (shots, "reauth"))
    driver.remove_virtual_authenticator()
    return authenticator


def tampered(credential):
    """Alterations of a fresh assertion, by what they break."""
    def client_data(change):
        def alter(fresh):
            data = json.loads(b64url_decode(fresh["response"]["clientDataJSON"]))
            change(data)
            response = dict(fresh["response"], clientDataJSON=b64url(json.dumps(data).encode()))
            return dict(fresh, response=response)
        return alter

    def flags(fresh):
        data = bytearray(b64url_decode(fresh["response"]["authenticatorData"]))
        data[32] &= ~0x04  # user verified
        return dict(fresh, response=dict(fresh["response"], authenticatorData=b64url(bytes(data))))

    return {
        "an origin the service does not list": client_data(lambda d: d.update(origin="https://evil.example")),
        "a challenge the service never issued": client_data(lambda d: d.update(challenge=b64url(os.urandom(32)))),
        "a create() answer posted as a get()": client_data(lambda d: d.update(type="webauthn.create")),
        "a cleared user-verified flag": flags,
    }


def second_account(driver, origin, latest):
    """A second account with a passkey of its own on the same authenticator; True when registered."""
    status, session = api(origin, "POST", "/auth/email/signup", {"email": "lee@example.com", "password": "violet-harbor-91"})
    access = session.get("access_token")
    api(origin, "POST", "/auth/reauth/email-link", token=access)
    _, granted = api(origin, "POST", "/auth/reauth/email-link/confirm", {"token": latest("reauth_link", "lee@example.com")["token"]})
    registered = run_async(driver, REGISTER, access, granted.get("reauth_token"), "Lee")
    return status == 201 and registered.get("status") == 201


def passkey_only(driver, origin, latest, code_for):
    """A phone account adds a passkey, removes its phone: the passkey is its only way in, and stays."""
    authenticator = driver.add_virtual_authenticator(
        VirtualAuthenticatorOptions(
            protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True, has_user_verification=True,
            is_user_verified=True))
    driver.get(origin + "/verify-email?token=none")
    phone = "+995511200377"
    status, sent = api(origin, "POST", "/auth/phone/request-otp", {"phone": phone, "purpose": "sign_in"})
    status, session = api(origin, "POST", "/auth/phone/verify-otp", {"request_id": sent.get("request_id"), "code": code_for(phone)})
    access = session.get("access_token")
    check(status == 200 and access, "passkey-only: a phone sign-up")
    status, sent = api(origin, "POST", "/auth/phone/request-otp", {"purpose": "reauth"}, token=access)
    status, granted = api(origin, "POST", "/auth/phone/verify-otp", {"request_id": sent.get("request_id"), "code": code_for(phone)}, token=access)
    grant = granted.get("reauth_token")
    registered = run_async(driver, REGISTER, access, grant, "Only way in")
    check(registered.get("status") == 201, "passkey-only: the passkey is registered")
    check(api(origin, "DELETE", "/me/auth-methods/phone", token=access, reauth=grant)[0] == 200, "passkey-only: the phone is removed")
    status, refused = api(origin, "DELETE", f"/me/passkeys/{registered['body'].get('id')}", token=access, reauth=grant)
    check(status == 409 and refused.get("error") == "last_method", "passkey-only: its last passkey cannot be removed (409 last_method)")
    asserted = run_async(driver, ASSERT, "/auth/passkey/options", None, None)
    check(run_async(driver, SEND, "/auth/passkey/login", None, asserted.get("credential"))["status"] == 200,
          "passkey-only: it still signs in with its passkey")
    driver.remove_virtual_authenticator()
    return authenticator
