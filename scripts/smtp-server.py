#!/usr/bin/env python3
"""A real SMTP server for the SMTP tests and benchmark (aiosmtpd, from scripts/smtp-venv.sh).

Listens on 127.0.0.1 (a free port unless --port), prints "port N" on standard output once it
accepts connections, and appends one JSON line per event to --record: each connection
("connect"), each successful AUTH ("auth", with the mechanism) and each message ("message"),
parsed the way a mail client would with Python's email package (subject decoded, parts decoded
to text, headers, defects) beside the raw bytes in base64. Addresses never go to standard
output or error: the tests' output is scanned for them.

Recipients steer the replies, so one server plays every answer a relay gives:
  reject550…@  550 on RCPT (unknown user)      defer451…@  451 on RCPT (try later)
  full552…@    552 after DATA (mailbox full)   spam554…@  554 after DATA, quoting a link

  smtp-server.py --tls starttls --cert C --key K --user U --password P --record FILE
  smtp-server.py --tls implicit …   # TLS from the first byte (smtps, port 465's way)
  smtp-server.py --tls none         # no TLS offered at all
  smtp-server.py --refuse-starttls  # offers STARTTLS, then answers 454 to it
  smtp-server.py --data-delay 0.5   # a slow relay (seconds before answering DATA)
  smtp-server.py --idle-timeout 1   # drops a client idle that long (421), as relays do
  smtp-server.py                    # without --record: nothing recorded (the benchmark)
"""

import argparse
import asyncio
import base64
import email
import email.policy
import itertools
import json
import signal
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

connection_ids = itertools.count(1)


class Recorder:
    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8") if path else None

    def write(self, **event):
        if self.file:
            self.file.write(json.dumps(event) + "\n")
            self.file.flush()


def summary(data):
    """The message as a mail client reads it."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    parts = []
    defects = [type(d).__name__ for d in message.defects]
    for part in message.walk() if message.is_multipart() else [message]:
        if part.is_multipart():
            continue
        defects += [type(d).__name__ for d in part.defects]
        parts.append({
            "content_type": part.get_content_type(),
            "charset": part.get_content_charset(),
            "transfer_encoding": part.get("Content-Transfer-Encoding"),
            # As a mail client shows it: lines end with \n (the parser keeps the wire's CRLF).
            "content": part.get_content().replace("\r\n", "\n"),
        })

    def addresses(name):
        header = message.get(name)
        if header is None:
            return []
        return [{"display_name": a.display_name, "address": a.addr_spec} for a in header.addresses]

    date = message.get("Date")
    lines = data.split(b"\r\n")
    return {
        "subject": str(message.get("Subject", "")),
        "from": addresses("From"),
        "to": addresses("To"),
        "reply_to": addresses("Reply-To"),
        "date": str(date) if date is not None else None,
        "date_valid": date is not None and getattr(date, "datetime", None) is not None,
        "message_id": str(message.get("Message-ID", "")) or None,
        "mime_version": str(message.get("MIME-Version", "")) or None,
        "content_type": message.get_content_type(),
        "header_names": list(message.keys()),
        "parts": parts,
        "defects": defects,
        "max_line_length": max(len(line) for line in lines),
        "bare_line_feeds": sum(line.count(b"\n") for line in lines),
        "raw": base64.b64encode(data).decode("ascii"),
    }


class Handler:
    def __init__(self, recorder, data_delay):
        self.recorder = recorder
        self.data_delay = data_delay

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        local = address.split("@")[0]
        if local.startswith("reject550"):
            return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown"
        if local.startswith("defer451"):
            return f"451 4.3.0 <{address}>: Temporary lookup failure"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.data_delay:
            await asyncio.sleep(self.data_delay)
        local = envelope.rcpt_tos[0].split("@")[0] if envelope.rcpt_tos else ""
        if local.startswith("full552"):
            return f"552 5.2.2 <{envelope.rcpt_tos[0]}>: Mailbox full"
        if local.startswith("spam554"):
            return "554 5.7.1 Message rejected: link https://321.fit/verify?token=abc is listed"
        if self.recorder.file:
            event = {
                "connection": session.connection_id,
                # STARTTLS or implicit: either way the transport is TLS now.
                "tls": server.transport.get_extra_info("ssl_object") is not None,
                "mail_from": envelope.mail_from,
                "rcpt_tos": envelope.rcpt_tos,
            }
            event.update(summary(envelope.content))
            self.recorder.write(event="message", **event)
        return "250 2.0.0 OK: queued"


class RecordingSMTP(SMTP):
    def __init__(self, *args, recorder, refuse_starttls, **kwargs):
        super().__init__(*args, **kwargs)
        self.recorder = recorder
        self.refuse_starttls = refuse_starttls

    def connection_made(self, transport):
        # Called again after STARTTLS, with a new session: the connection is still the same.
        first = getattr(self, "connection_id", None) is None
        if first:
            self.connection_id = next(connection_ids)
        super().connection_made(transport)
        self.session.connection_id = self.connection_id
        if first:
            self.recorder.write(event="connect", connection=self.connection_id)

    async def smtp_STARTTLS(self, arg):
        if self.refuse_starttls:
            await self.push("454 4.7.0 TLS not available due to local problem")
            return
        await super().smtp_STARTTLS(arg)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tls", choices=["starttls", "implicit", "none"], default="starttls")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--user")
    parser.add_argument("--password")
    parser.add_argument("--mechanisms", default="PLAIN,LOGIN", help="the AUTH mechanisms offered")
    parser.add_argument("--refuse-starttls", action="store_true")
    parser.add_argument("--data-delay", type=float, default=0.0, help="seconds before answering DATA")
    parser.add_argument("--idle-timeout", type=float, default=300.0, help="seconds before an idle client is dropped")
    parser.add_argument("--record")
    arguments = parser.parse_args()

    recorder = Recorder(arguments.record)
    context = None
    if arguments.tls != "none" or arguments.refuse_starttls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(arguments.cert, arguments.key)

    def authenticator(server, session, envelope, mechanism, auth_data):
        good = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == (arguments.user or "").encode()
            and auth_data.password == (arguments.password or "").encode()
        )
        if good:
            recorder.write(event="auth", connection=session.connection_id, mechanism=mechanism)
        # handled=False: aiosmtpd answers 535 itself (by default it would leave the client waiting).
        return AuthResult(success=good, handled=False)

    offered = {m.strip().upper() for m in arguments.mechanisms.split(",") if m.strip()}
    excluded = [m for m in ("PLAIN", "LOGIN") if m not in offered]
    handler = Handler(recorder, arguments.data_delay)

    def factory():
        options = dict(
            recorder=recorder,
            refuse_starttls=arguments.refuse_starttls,
            hostname="localhost",
            data_size_limit=10 * 1024 * 1024,
            auth_exclude_mechanism=excluded,
            timeout=arguments.idle_timeout,
        )
        if arguments.tls == "starttls" or arguments.refuse_starttls:
            options.update(tls_context=context, require_starttls=not arguments.refuse_starttls)
        if arguments.user is not None:
            options.update(authenticator=authenticator, auth_required=True)
        if arguments.tls == "implicit" or (arguments.tls == "none" and not arguments.refuse_starttls):
            # aiosmtpd sees TLS only when it made it (STARTTLS): implicit TLS is TLS too.
            options.update(auth_require_tls=False)
        return RecordingSMTP(handler, **options)

    async def serve():
        # A parent that blocks signals in its threads (a Swift test process) passes the mask on.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            factory, host="127.0.0.1", port=arguments.port,
            ssl=context if arguments.tls == "implicit" else None)
        print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
        server.close()

    asyncio.run(serve())


if __name__ == "__main__":
    sys.exit(main())
