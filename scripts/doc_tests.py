"""Runs the shell commands of the README and docs/ as a newcomer would, against a development
instance started by README command one (`./scripts/run.sh`), so a command that no longer works
as printed fails the run.

Fenced blocks marked `sh` run, in order, each file's blocks in one bash (`set -euo pipefail`)
from the clone's root; blocks marked `shell` are shown, not run (they start the service
themselves, or need another host). The instance runs in a scratch copy of the clone's layout (its
scripts, build and schema linked in), in development mode on a free port, which replaces
`localhost:8080` in the commands. What the commands print stays in a file (it holds tokens):
on a failure, the file, the doc's line and the end of that output are shown.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["README.md"] + sorted(os.path.join("docs", name) for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))
FENCE = re.compile(r"^```(\w*)\s*$")


def blocks(path):
    """The `sh` blocks of a Markdown file: lists of (line number, text)."""
    found, current = [], None
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            match = FENCE.match(line.rstrip("\n"))
            if current is None and match and match.group(1) == "sh":
                current = []
            elif current is not None and line.startswith("```"):
                found.append(current)
                current = None
            elif current is not None:
                current.append((number, line.rstrip("\n")))
    return found


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def contract_copy_is_current():
    """docs/api.md below its preface equals the product's contract, when that is beside the clone."""
    shared = os.path.join(ROOT, "..", "shared", "API.md")
    if not os.path.exists(shared):
        return True
    copy = open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8").read()
    body = copy.split("\n---\n\n", 1)[-1]
    return body == open(shared, encoding="utf-8").read()


def main():
    # The commands run beside links into the clone: none may change it.
    tree_before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    if not contract_copy_is_current():
        sys.exit("docs: docs/api.md is not the contract in ../shared/API.md: copy it again below the preface")
    binary = os.environ.get("LEDGER_BINARY") or os.path.join(ROOT, ".build", "debug", "ledger")
    work = tempfile.mkdtemp(prefix="ledger-docs-")
    os.chmod(work, 0o755)  # the cluster runs as the postgres user when this runs as root
    for name in ["scripts", ".build", "schema", "Sources", "Package.swift"]:
        os.symlink(os.path.join(ROOT, name), os.path.join(work, name))
    port = free_port()
    # A newcomer's shell: nothing of this machine's own configuration.
    environment = {key: value for key, value in os.environ.items() if key != "DATABASE_URL" and not key.startswith("LEDGER_")}
    environment.update({"LEDGER_BINARY": binary, "LEDGER_PORT": str(port)})
    server_log = os.environ.get("LEDGER_DOCS_SERVER_LOG") or os.path.join(work, "server.log")
    with open(server_log, "a", encoding="utf-8") as log:
        server = subprocess.Popen(["./scripts/run.sh", "--reset"], cwd=work, env=environment, stdout=log, stderr=log,
                                  start_new_session=True)
    failures = 0
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if server.poll() is not None:
                sys.exit("docs: ./scripts/run.sh exited before it was ready")
            time.sleep(0.5)
        else:
            sys.exit("docs: ./scripts/run.sh did not get ready in 120 s")
        shell_environment = {key: value for key, value in environment.items() if key != "LEDGER_PORT"}
        for path in DOCS:
            found = blocks(path)
            if not found:
                continue
            lines = [(0, "set -euo pipefail"), (0, "trap 'echo $LINENO > \"$DOC_FAILED_AT\"' ERR")]
            for block in found:
                lines += [(number, text.replace("localhost:8080", f"localhost:{port}")) for number, text in block]
            script = os.path.join(work, "doc.sh")
            with os.fdopen(os.open(script, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as handle:
                handle.write("\n".join(text for _, text in lines) + "\n")
            failed_at = os.path.join(work, "failed-at")
            output = os.path.join(work, "doc.out")
            started = time.monotonic()
            # What the commands print holds tokens: readable by this user only.
            with os.fdopen(os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
                result = subprocess.run(["bash", script], cwd=work, env={**shell_environment, "DOC_FAILED_AT": failed_at},
                                        stdout=out, stderr=subprocess.STDOUT, timeout=600)
            commands = sum(1 for block in found for _, text in block if text.strip() and not text.lstrip().startswith("#"))
            if result.returncode == 0:
                print(f"docs: {path}: {len(found)} block(s), {commands} line(s) of commands ran ({time.monotonic() - started:.1f} s)")
                continue
            failures += 1
            line = "?"
            if os.path.exists(failed_at):
                generated = int(open(failed_at).read().strip() or 0)
                line = str(lines[generated - 1][0]) if 0 < generated <= len(lines) else "?"
                os.remove(failed_at)
            print(f"docs: {path}:{line}: a command failed (exit {result.returncode}); the end of what the commands printed:")
            print("".join(open(output, encoding="utf-8", errors="replace").readlines()[-15:]))
    finally:
        os.killpg(server.pid, 2)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
        shutil.rmtree(work, ignore_errors=True)
    if subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout != tree_before:
        sys.exit("docs: the commands changed files of the clone (git status differs): a block that does must be `shell`")
    if failures:
        sys.exit(f"docs: {failures} file(s) have commands that do not run as printed")
    print("docs: every sh block of the README and docs/ ran as printed")


if __name__ == "__main__":
    main()
