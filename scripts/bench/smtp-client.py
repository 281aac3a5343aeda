#!/usr/bin/env python3
"""The comparison for `ledger-bench smtp`: a plain Python smtplib loop against the same relay.

N threads, each with its own connection (STARTTLS checked against --ca-file, AUTH), send their
share of --messages one after another, every one the same multipart/alternative message of the
benchmark's size composed once beforehand (so this measures the SMTP conversation alone, while
ledger-bench also renders and composes each message). Connecting is inside the timed part, as
it is for ledger-bench. Prints one `bench smtp client=python-smtplib …` line.
"""

import argparse
import smtplib
import ssl
import threading
import time
from email.message import EmailMessage


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca-file", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--messages", type=int, default=500)
    arguments = parser.parse_args()

    message = EmailMessage()
    message["From"] = "321Fit <no-reply@321.fit>"
    message["To"] = "bench@example.org"
    message["Reply-To"] = "support@321.fit"
    message["Subject"] = "Bestätige deine E-Mail-Adresse für 321Fit"
    message.set_content("Hallo!\n\nDein Bestätigungscode lautet: 123456\n" + "Text " * 90, cte="quoted-printable")
    message.add_alternative("<!doctype html><p>Bestätige deine E-Mail-Adresse</p>" + "<p>HTML</p>" * 130, subtype="html",
                            cte="quoted-printable")
    # CRLF: smtplib sends bytes as they are, and bare LFs make one over-long line to the server.
    data = message.as_bytes(policy=message.policy.clone(linesep="\r\n"))
    context = ssl.create_default_context(cafile=arguments.ca_file)
    errors = []

    def worker(index):
        try:
            with smtplib.SMTP("localhost", arguments.port, timeout=30) as client:
                client.starttls(context=context)
                client.login(arguments.user, arguments.password)
                for number in range(index, arguments.messages, arguments.connections):
                    client.sendmail("no-reply@321.fit", [f"bench{number}@example.org"], data)
        except Exception as error:  # reported below; one failed worker fails the run
            errors.append(type(error).__name__)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(arguments.connections)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    if errors:
        raise SystemExit(f"smtp-client: {len(errors)} worker(s) failed: {', '.join(errors)}")
    print(f"bench smtp client=python-smtplib connections={arguments.connections} messages={arguments.messages} "
          f"seconds={elapsed:.2f} emails_per_s={arguments.messages / elapsed:.1f} message_bytes={len(data)}")


if __name__ == "__main__":
    main()
