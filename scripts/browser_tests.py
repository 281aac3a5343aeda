"""The link pages in a real browser: Debian's chromium driven by selenium.

Starts `ledger serve` (the binary and DATABASE_URL from the environment) with a delivery
webhook that this script receives, so the links the service sends are the ones the browser
opens. Drives each page: verify, reset (a rule broken, then a good password that the API then
signs in with), confirm an email change, revert it (every session ends), each again after use
(the expired page at once, no form), once with JavaScript off; checks the headers of every page, that a GET uses
nothing, and the two .well-known documents. Then one HTML email as a mail client shows it: the
verification email rendered by `ledger templates preview verify_email --html FILE` (the built-in
template and layout), its text, button and written-out link visible. Then passkeys with
Chromium's virtual authenticator (scripts/browser_passkeys.py). Screenshots go to
.build/screenshots/.
"""

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from browser_console import console
from browser_passkeys import passkey_only, passkeys
from service_harness import api, check, finish, free_port, serving

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOTS = os.path.join(ROOT, ".build", "screenshots")
PASSWORD = "violet-harbor-91"
NEW_PASSWORD = "copper-lantern-77"
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class Deliveries(BaseHTTPRequestHandler):
    """The delivery webhook: keeps every message the service sends."""

    messages = []
    lock = threading.Lock()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with Deliveries.lock:
            Deliveries.messages.append(json.loads(body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def latest(template, to=None, timeout=20):
    """The newest message of a template (to an address), waiting for the dispatcher."""
    deadline = time.time() + timeout
    seen = None
    while time.time() < deadline:
        with Deliveries.lock:
            found = [m for m in Deliveries.messages if m["template"] == template and (to is None or m["to"] == to)]
        if found:
            seen = found[-1]
            return seen
        time.sleep(0.1)
    raise AssertionError(f"no {template} message arrived")


codes_used = {}


def next_code(phone, timeout=20):
    """The next code texted to `phone` that no check has used yet."""
    codes_used[phone] = codes_used.get(phone, 0) + 1
    deadline = time.time() + timeout
    while time.time() < deadline:
        with Deliveries.lock:
            sent = [m for m in Deliveries.messages if m["template"] == "otp" and m["to"] == phone]
        if len(sent) >= codes_used[phone]:
            return sent[codes_used[phone] - 1]["code"]
        time.sleep(0.1)
    raise AssertionError(f"no code {codes_used[phone]} for {phone}")


def raw_get(url):
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def browser(javascript=True, language=None):
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=420,900", "--disable-gpu"):
        options.add_argument(argument)
    prefs = {}
    if not javascript:
        prefs["profile.managed_default_content_settings.javascript"] = 2
    if language:
        # The browser's Accept-Language: the pages answer in it.
        options.add_argument(f"--lang={language}")
        prefs["intl.accept_languages"] = language
    if prefs:
        options.add_experimental_option("prefs", prefs)
    binary = os.environ.get("LEDGER_CHROMIUM", "/usr/bin/chromium")
    options.binary_location = binary
    return webdriver.Chrome(service=Service(os.environ.get("LEDGER_CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


def page_link(message, base):
    """The link a message carries, pointed at this service (LEDGER_LINK_BASE_URL is its address)."""
    check(message["link"].startswith(base + "/"), f"{message['template']} link points at the link base ({message['link'].split('?')[0]})")
    return message["link"]


def check_headers(link, what):
    """A GET of the page: 200, the page headers, and nothing used."""
    status, headers, _ = raw_get(link)
    check(status == 200 and all(headers.get(name) == value for name, value in PAGE_HEADERS.items()), f"{what} page: 200 and its headers")


def submit(driver, name):
    driver.find_element(By.ID, "submit").click()
    time.sleep(0.2)
    driver.save_screenshot(os.path.join(SHOTS, name + ".png"))
    return driver.find_element(By.TAG_NAME, "body").text


def shows_expired(driver, link, name):
    """A used link opened again: the expired page at once, with no form to fill in."""
    driver.get(link)
    driver.save_screenshot(os.path.join(SHOTS, name + ".png"))
    text = driver.find_element(By.TAG_NAME, "body").text
    return "This link has expired" in text and not driver.find_elements(By.TAG_NAME, "form")


def main():
    os.makedirs(SHOTS, exist_ok=True)
    hook_port = free_port()
    hook = ThreadingHTTPServer(("127.0.0.1", hook_port), Deliveries)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    environment = dict(os.environ)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    environment.update(
        {
            "LEDGER_DELIVERY_WEBHOOK_URL": f"http://127.0.0.1:{hook_port}/",
            "LEDGER_LINK_BASE_URL": base,
            "LEDGER_MASTER_KEY": base64.b64encode(os.urandom(32)).decode(),
            "LEDGER_SCRYPT_LOG_N": "10",
            "LEDGER_APP_STORE_URL": "https://apps.apple.com/app/id6450000000",
            "LEDGER_PLAY_STORE_URL": "https://play.google.com/store/apps/details?id=fit.threetwoone",
            "LEDGER_IOS_APP_IDS": "TEAM123456.fit.321.app",
            "LEDGER_ANDROID_PACKAGE": "fit.threetwoone",
            "LEDGER_ANDROID_CERT_SHA256": "14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5",
            # Passkeys are scoped to a domain, never an IP address: the browser reaches the
            # service as localhost for them.
            "LEDGER_WEBAUTHN_RP_ID": "localhost",
            "LEDGER_WEBAUTHN_ORIGINS": f"http://localhost:{port}",
            "LEDGER_CONSOLE_ORIGIN": f"http://localhost:{port}",
        }
    )
    try:
        with serving(environment, os.environ.get("LEDGER_BROWSER_SERVER_LOG"), port=port) as served:
            run(served)
            georgian_page(served)
            email_preview()
            georgian_email()
            driver = browser()
            try:
                passkeys(driver, f"http://localhost:{port}", latest, SHOTS)
                passkey_only(driver, f"http://localhost:{port}", latest, next_code)
            finally:
                driver.quit()
            # A browser of its own: the console's staff passkey beside none of the apps'.
            console(browser, f"http://localhost:{port}", environment, latest, SHOTS)
    finally:
        hook.shutdown()
    logged = open(os.environ["LEDGER_BROWSER_SERVER_LOG"], errors="replace").read() if os.environ.get("LEDGER_BROWSER_SERVER_LOG") else ""
    tokens = [m["token"] for m in Deliveries.messages if m.get("token")]
    check(bool(tokens) and not any(token in logged for token in tokens), "no link token in the service's log")
    finish("browser", "browser: every page check passed; screenshots in .build/screenshots/")


def run(base):
    driver = browser()
    try:
        # Sign-up sends the verification link.
        status, session = api(base, "POST", "/auth/email/signup", {"email": "ana@example.com", "password": PASSWORD})
        check(status == 201, "sign-up")
        link = page_link(latest("verify_email"), base)
        for attempt in range(2):  # a GET (a mail scanner's prefetch) uses nothing
            status, headers, html = raw_get(link)
            check(status == 200 and "Verify your email" in html, f"GET verify page ({attempt + 1})")
            for name, value in PAGE_HEADERS.items():
                check(headers.get(name) == value, f"verify page header {name}")
        driver.get(link)
        driver.save_screenshot(os.path.join(SHOTS, "verify-email.png"))
        check("Install the app to continue" in driver.page_source and "apps.apple.com" in driver.page_source, "verify page offers the app")
        text = submit(driver, "verify-email-done")
        check("Your email is verified." in text, "verify in the browser")
        status, hub = api(base, "GET", "/me/auth-methods", token=session["access_token"])
        check(hub.get("email_verified") is True, "the API sees the address verified")
        check(shows_expired(driver, link, "verify-email-expired"), "verify link again: expired, no form")

        # Password reset: a rule broken (the API's message, inline), a mismatch, then a good one.
        api(base, "POST", "/auth/password/forgot", {"email": "ana@example.com"})
        link = page_link(latest("password_reset"), base)
        check_headers(link, "reset")
        driver.get(link)
        driver.save_screenshot(os.path.join(SHOTS, "reset-password.png"))
        check(driver.find_element(By.CSS_SELECTOR, "label[for=new_password]").text == "New password", "reset page labels its fields")
        driver.find_element(By.ID, "new_password").send_keys("1234567")
        driver.find_element(By.ID, "confirm_password").send_keys("1234567")
        text = submit(driver, "reset-password-rules")
        check("Password must be at least 8 characters." in text and "Not all numbers" in text, "reset: the rules' messages shown")
        driver.find_element(By.ID, "new_password").send_keys(NEW_PASSWORD)
        driver.find_element(By.ID, "confirm_password").send_keys(NEW_PASSWORD + "x")
        text = submit(driver, "reset-password-mismatch")
        check("Passwords don't match." in text, "reset: mismatch shown")
        driver.find_element(By.ID, "new_password").send_keys(NEW_PASSWORD)
        driver.find_element(By.ID, "confirm_password").send_keys(NEW_PASSWORD)
        text = submit(driver, "reset-password-done")
        check("Password updated. Sign in with your new password." in text, "reset in the browser")
        status, session = api(base, "POST", "/auth/email/login", {"email": "ana@example.com", "password": NEW_PASSWORD})
        check(status == 200 and "access_token" in session, "the API signs in with the new password")
        check(shows_expired(driver, link, "reset-password-expired"), "reset link again: expired, no form")

        # Email change: confirm from the new address, then revert from the old one.
        access = session["access_token"]
        status, grant = api(base, "POST", "/auth/reauth/password", {"password": NEW_PASSWORD}, token=access)
        status, _ = api(base, "POST", "/auth/email/request-change", {"new_email": "ana.new@example.com"}, token=access, reauth=grant["reauth_token"])
        check(status == 202, "email change requested")
        link = page_link(latest("email_change_confirm", "ana.new@example.com"), base)
        check_headers(link, "confirm change")
        driver.get(link)
        driver.save_screenshot(os.path.join(SHOTS, "confirm-email-change.png"))
        check("Your new email address is confirmed." in submit(driver, "confirm-email-change-done"), "confirm the change in the browser")
        check(shows_expired(driver, link, "confirm-email-change-expired"), "confirm link again: expired, no form")
        link = page_link(latest("email_changed_notice", "ana@example.com"), base)
        check_headers(link, "revert")
        driver.get(link)
        driver.save_screenshot(os.path.join(SHOTS, "revert-email.png"))
        check("Every device will be signed out." in driver.page_source, "revert page says what it does")
        # Whoever changed the email may know the password: the revert page takes a new one, twice.
        driver.find_element(By.ID, "new_password").send_keys(PASSWORD)
        driver.find_element(By.ID, "confirm_password").send_keys(PASSWORD + "x")
        check("Passwords don't match." in submit(driver, "revert-email-mismatch"), "revert: mismatch shown")
        driver.find_element(By.ID, "new_password").send_keys(PASSWORD)
        driver.find_element(By.ID, "confirm_password").send_keys(PASSWORD)
        check("signed out everywhere" in submit(driver, "revert-email-done"), "revert in the browser")
        status, _ = api(base, "GET", "/me", token=access)
        check(status == 401, "after the revert every session has ended")
        status, _ = api(base, "POST", "/auth/email/login", {"email": "ana@example.com", "password": PASSWORD})
        check(status == 200, "after the revert the address signs in with the password the page set")
        check(shows_expired(driver, link, "revert-email-expired"), "revert link again: expired, no form")
    finally:
        driver.quit()

    # JavaScript off: the pages need none.
    driver = browser(javascript=False)
    try:
        api(base, "POST", "/auth/email/signup", {"email": "bo@example.com", "password": PASSWORD})
        driver.get(page_link(latest("verify_email", "bo@example.com"), base))
        check("Your email is verified." in submit(driver, "verify-email-no-javascript"), "verify with JavaScript off")
    finally:
        driver.quit()

    # The app-link documents.
    status, _, body = raw_get(base + "/.well-known/apple-app-site-association")
    details = json.loads(body)["applinks"]["details"][0] if status == 200 else {}
    check(details.get("appIDs") == ["TEAM123456.fit.321.app"], "apple-app-site-association names the iOS app")
    check([c["/"] for c in details.get("components", [])] == ["/verify-email", "/reset-password", "/confirm-email-change", "/revert-email", "/reauth"],
          "apple-app-site-association lists the link paths")
    check(json.loads(body).get("webcredentials", {}).get("apps") == ["TEAM123456.fit.321.app"] if status == 200 else False,
          "apple-app-site-association lets the iOS app use the domain's passkeys")
    status, _, body = raw_get(base + "/.well-known/assetlinks.json")
    check(status == 200 and json.loads(body)[0]["target"]["package_name"] == "fit.threetwoone", "assetlinks.json names the Android app")
    check(status == 200 and "delegate_permission/common.get_login_creds" in json.loads(body)[0]["relation"],
          "assetlinks.json lets the Android app use the domain's passkeys")


def georgian_page(base):
    """A verification page in a browser set to Georgian: the page's words are Georgian (docs/screenshots/link-page-ka.png)."""
    status, _ = api(base, "POST", "/auth/email/signup", {"email": "nino@example.com", "password": PASSWORD})
    check(status == 201, "sign-up (nino)")
    link = page_link(latest("verify_email", to="nino@example.com"), base)
    driver = browser(language="ka")
    try:
        driver.get(link)
        driver.save_screenshot(os.path.join(SHOTS, "link-page-ka.png"))
        check(driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ka", "Georgian page: it says its language")
        text = driver.find_element(By.TAG_NAME, "body").text
        check("დაადასტურეთ ელფოსტა" in text and "Verify your email" not in text, "Georgian page: its words are Georgian")
        text = submit(driver, "link-page-ka-done")
        check("ელფოსტა დადასტურებულია." in text, "Georgian page: verified, in Georgian")
    finally:
        driver.quit()


def email_preview():
    """The built-in verification email, rendered by the binary with its sample link, in a phone-sized window."""
    path = os.path.join(ROOT, ".build", "email-verify.html")
    result = subprocess.run([os.environ["LEDGER_BINARY"], "templates", "preview", "verify_email", "--html", path],
                            capture_output=True, text=True, timeout=60)
    check(result.returncode == 0 and os.path.exists(path), f"templates preview writes the HTML ({result.stderr.strip()[:200]})")
    if result.returncode != 0:
        return
    driver = browser(javascript=False)
    try:
        driver.get("file://" + path)
        driver.save_screenshot(os.path.join(SHOTS, "email-verify.png"))
        check(driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en", "email: the page says its language")
        text = driver.find_element(By.TAG_NAME, "body").text
        check("Verify your email" in text and "Verification links expire after 30 minutes." in text, "email: its text is visible")
        button = driver.find_element(By.ID, "action")
        link = driver.find_element(By.ID, "link")
        check(button.is_displayed() and button.text == "Verify email", "email: the button is visible")
        href = button.get_attribute("href")
        check(link.is_displayed() and link.text == href and href.startswith("https://321.fit/verify-email?token="),
              "email: the link is written out, the same as the button's")
        width = driver.execute_script("return document.documentElement.scrollWidth")
        check(width <= driver.execute_script("return window.innerWidth"), "email: one column, no sideways scrolling on a phone")
    finally:
        driver.quit()


def georgian_email():
    """The verification email in Georgian, as `ledger templates preview --locale ka` renders it (docs/screenshots/email-ka.png)."""
    path = os.path.join(ROOT, ".build", "email-verify-ka.html")
    result = subprocess.run([os.environ["LEDGER_BINARY"], "templates", "preview", "verify_email", "--locale", "ka", "--html", path],
                            capture_output=True, text=True, timeout=60)
    check(result.returncode == 0 and os.path.exists(path), f"templates preview --locale ka writes the HTML ({result.stderr.strip()[:200]})")
    if result.returncode != 0:
        return
    driver = browser(javascript=False)
    try:
        driver.get("file://" + path)
        driver.save_screenshot(os.path.join(SHOTS, "email-ka.png"))
        check(driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == "ka", "Georgian email: the page says its language")
        text = driver.find_element(By.TAG_NAME, "body").text
        check("დაადასტურეთ ელფოსტა" in text and "30 წუთი" in text and "Verify" not in text, "Georgian email: its words are Georgian")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
