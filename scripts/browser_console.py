"""The support console in a real browser (docs/support.md "The console"): `ledger staff add`
sends an invitation, its page registers a passkey in Chromium's virtual authenticator, the
passkey signs in, staff search, open an account, disable it behind a confirmation that asks for
the reason and the passkey again, and send a sign-out with a reason. A form whose token was
tampered with is refused, and `ledger staff remove` ends the session at once. Screenshots of
each step go to .build/screenshots/console-*.png.
"""

import os
import subprocess
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions
from selenium.webdriver.support.ui import Select, WebDriverWait
from service_harness import api, check


def staff(environment, *arguments):
    """`ledger staff …` against the served database; its standard output."""
    result = subprocess.run([os.environ["LEDGER_BINARY"], "staff", *arguments], env=environment, capture_output=True, text=True, timeout=60)
    check(result.returncode == 0, f"ledger staff {arguments[0]} ({result.stderr.strip()[:200]})")
    return result.stdout


def wait_for(driver, condition, what, timeout=20):
    try:
        WebDriverWait(driver, timeout).until(lambda d: condition(d))
        return True
    except Exception:
        shown = driver.find_element(By.TAG_NAME, "body").text.replace("\n", " ")[:300]
        check(False, f"{what} (at {driver.current_url}: {shown})")
        return False


def shot(driver, shots, name):
    driver.save_screenshot(os.path.join(shots, f"console-{name}.png"))


def console(make_browser, origin, environment, latest, shots):
    """`origin`: the console as the browser reaches it (`http://localhost:PORT`, LEDGER_CONSOLE_ORIGIN)."""
    driver = make_browser()
    try:
        driver.set_window_size(1280, 900)
        driver.add_virtual_authenticator(
            VirtualAuthenticatorOptions(
                protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True, has_user_verification=True,
                is_user_verified=True))
        run(driver, origin, environment, latest, shots)
    finally:
        driver.quit()


def run(driver, origin, environment, latest, shots):
    # The invitation: an email, a page, a passkey.
    staff(environment, "add", "--email", "nino@321.fit", "--role", "admin")
    invitation = latest("staff_invitation", "nino@321.fit")
    link = invitation["link"]
    check(link.startswith(origin + "/console/invitation?token="), "console: the invitation links to the console")
    driver.get(link)
    shot(driver, shots, "invitation")
    check("Create your passkey" in driver.page_source, "console: the invitation page")
    driver.find_element(By.ID, "passkey-register").click()
    wait_for(driver, lambda d: d.current_url.endswith("/console/sign-in"), "console: the passkey is registered")
    check(len(driver.get_credentials()) == 1, "console: the authenticator holds the staff passkey")
    driver.get(link)
    check("expired" in driver.find_element(By.TAG_NAME, "body").text, "console: the invitation works once")

    # Sign in with the passkey, nothing typed.
    driver.get(origin + "/console/sign-in")
    shot(driver, shots, "sign-in")
    driver.find_element(By.ID, "passkey-sign-in").click()
    wait_for(driver, lambda d: d.current_url.endswith("/console"), "console: the passkey signs in")
    cookie = driver.get_cookie("__Host-ledger_console") or {}
    check(cookie.get("httpOnly") and cookie.get("secure") and cookie.get("sameSite") == "Strict" and cookie.get("path") == "/",
          f"console: the session cookie is HttpOnly, Secure, SameSite=Strict, on / ({sorted(cookie.keys())})")

    # A person who lost their phone: search, open, act.
    status, session = api(origin, "POST", "/auth/email/signup", {"email": "tamar.g@example.com", "password": "violet-harbor-91"})
    check(status == 201, "console: a person's account")
    Select(driver.find_element(By.ID, "by")).select_by_value("email")
    driver.find_element(By.ID, "q").send_keys("Tamar.G@example.com")
    driver.find_element(By.ID, "find").click()
    wait_for(driver, lambda d: "1 found" in d.page_source, "console: an exact search finds the account")
    driver.find_element(By.CSS_SELECTOR, ".results a").click()
    wait_for(driver, lambda d: "/console/accounts/" in d.current_url and "History" in d.page_source, "console: the account page")
    check("Hash chain verified" in driver.find_element(By.ID, "chain").text, "console: the history's chain verifies")
    driver.set_window_size(1280, 1400)
    shot(driver, shots, "account")
    driver.set_window_size(1280, 900)
    account_page = driver.current_url

    # Sign out everywhere: a confirmation asking why, no passkey (an everyday fix).
    driver.find_element(By.ID, "action-sign-out").click()
    driver.find_element(By.ID, "reason").send_keys("Ticket 4411: lost phone, caller verified by ID")
    shot(driver, shots, "confirmation")
    driver.find_element(By.ID, "confirm").click()
    wait_for(driver, lambda d: "Signed out everywhere." in d.page_source, "console: signed out everywhere, with the reason")
    check(api(origin, "GET", "/me", token=session["access_token"])[0] == 401, "console: the person's session ended")
    check("Ticket 4411" in driver.page_source, "console: the history shows who and why")
    check("staff:" in driver.find_element(By.CSS_SELECTOR, ".timeline").text, "console: the history names the staff member as the actor")

    # A tampered form token is refused, and nothing happens.
    driver.get(account_page + "/disable")
    # (A credential already in the form, so the page's script lets the form go as it is.)
    driver.execute_script("document.querySelector('#confirm-form input[name=csrf]').value = 'forged'")
    driver.execute_script("document.getElementById('credential').value = '{}'")
    driver.find_element(By.ID, "reason").send_keys("forged")
    driver.find_element(By.ID, "confirm").click()
    wait_for(driver, lambda d: "This form has expired" in d.page_source, "console: a forged form token is refused")
    shot(driver, shots, "csrf-refused")

    # Disable: an admin change asks for the passkey again.
    driver.get(account_page + "/disable")
    driver.find_element(By.ID, "reason").send_keys("Ticket 4412: card fraud reported by the bank")
    driver.find_element(By.ID, "confirm").click()
    wait_for(driver, lambda d: "The account is disabled." in d.page_source, "console: disabled after the passkey again")
    status, answer = api(origin, "POST", "/auth/email/login", {"email": "tamar.g@example.com", "password": "violet-harbor-91"})
    check(status == 403 and answer.get("error") == "account_disabled", "console: the person cannot sign in while disabled")
    shot(driver, shots, "disabled")

    # Removal ends the session at once.
    staff(environment, "remove", "--email", "nino@321.fit")
    driver.get(origin + "/console")
    wait_for(driver, lambda d: d.current_url.endswith("/console/sign-in"), "console: removal ends the session at once")
    listed = staff(environment, "list")
    check("nino@321.fit  admin  removed" in listed, f"console: ledger staff list shows the removal ({listed.strip()})")
