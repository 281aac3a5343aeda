"""The layering of docs/architecture.md, checked against `swift package dump-package` (stdin).

Two rules:
1. A target imports only the targets it declares in Package.swift (SwiftPM would let it import
   their dependencies too, which is how a use case quietly grows a PostgreSQL dependency).
2. A target declares only targets of a lower layer (LAYERS), and the pure layers never reach
   PostgreSQL, even through another target (NO_POSTGRES), apart from the arrows in KNOWN, each
   with the issue that removes it.

`--self-test` runs the rules on packages with a forbidden arrow and fails unless each is caught.
"""
import json
import pathlib
import re
import sys

LAYERS = {
    "LedgerCore": 0,
    "LedgerCrypto": 1, "LedgerPostgres": 1, "LedgerImages": 1,
    "LedgerEvents": 2, "LedgerIdentity": 2, "LedgerWebAuthn": 2,
    "LedgerEventStore": 3, "LedgerAccounts": 3, "LedgerWebAuthnTesting": 3,
    "LedgerAccountsPostgres": 4, "LedgerProviders": 4, "LedgerDelivery": 4,
    "LedgerWorkers": 5, "LedgerServer": 5,
    "LedgerApp": 6,
    "LedgerCLI": 7, "LedgerBench": 7,
}
NO_POSTGRES = {
    "LedgerIdentity", "LedgerAccounts", "LedgerProviders", "LedgerDelivery", "LedgerServer", "LedgerWebAuthn",
    "LedgerWebAuthnTesting",
}
POSTGRES = {"LedgerPostgres", "CLibPQ"}
# The Swift client apps add (docs/clients.md): a package of its own inside this one. Its targets
# declare only each other (an app must not build the service), and no service target declares them.
CLIENT = {"LedgerClient": 0, "LedgerClientAsyncHTTPClient": 1}
# Arrows that break a rule today, and why they are tolerated until the named work removes them.
# None today: LedgerAccounts reads events through LedgerEvents, not the store.
KNOWN: dict = {}


def declared(target):
    return {d.get("byName", [None])[0] for d in target["dependencies"]} - {None}


def arrows(package):
    """Problems with the declared arrows (rule 2)."""
    targets = {t["name"]: t for t in package["targets"]}
    problems = []
    for name, target in targets.items():
        for dependency in sorted(declared(target)):
            if name in CLIENT and dependency in targets and (dependency not in CLIENT or CLIENT[dependency] >= CLIENT[name]):
                problems.append(f"{name} declares {dependency}: the client declares only the client's lower targets")
            if name in LAYERS and dependency in CLIENT:
                problems.append(f"{name} declares {dependency}: the service never depends on its client")
        if name not in LAYERS:
            continue
        for dependency in sorted(declared(target)):
            if (name, dependency) in KNOWN:
                continue
            if dependency in LAYERS and LAYERS[dependency] >= LAYERS[name]:
                problems.append(f"{name} declares {dependency}, which is not below it (docs/architecture.md)")
        if name in NO_POSTGRES:
            seen, stack = set(), [d for d in declared(target) if (name, d) not in KNOWN]
            while stack:
                current = stack.pop()
                if current in seen:
                    continue
                seen.add(current)
                if current in POSTGRES:
                    problems.append(f"{name} reaches {current}: it must not depend on PostgreSQL")
                    break
                if current in targets:
                    stack.extend(d for d in declared(targets[current]) if (current, d) not in KNOWN)
    return problems


def imports(package):
    """Imports of targets not declared (rule 1)."""
    targets = {t["name"]: t for t in package["targets"]}
    stray = []
    for name, target in targets.items():
        if target["type"] not in ("regular", "executable") or target.get("path"):
            continue
        for file in sorted(pathlib.Path("Sources", name).rglob("*.swift")):
            for imported in re.findall(r"^import (Ledger\w+)$", file.read_text(), re.M):
                if imported in targets and imported not in declared(target):
                    stray.append(f"{file}: imports {imported}, which {name} does not declare")
    return stray


def self_test(package):
    def with_arrow(source, dependency):
        changed = json.loads(json.dumps(package))
        for target in changed["targets"]:
            if target["name"] == source:
                target["dependencies"].append({"byName": [dependency, None]})
        return changed
    cases = [
        ("LedgerAccounts", "LedgerEventStore"),  # a use case on the store, and so on libpq
        ("LedgerIdentity", "LedgerAccounts"),   # upwards
        ("LedgerCore", "LedgerCrypto"),         # upwards from the bottom
        ("LedgerServer", "LedgerCLI"),          # a library on the executable
        ("LedgerIdentity", "LedgerPostgres"),   # the pure domain on libpq
        ("LedgerProviders", "LedgerAccountsPostgres"),  # sideways, and so to libpq
        ("LedgerServer", "LedgerEventStore"),    # the HTTP layer on the store, and so on libpq
        ("LedgerClient", "LedgerCore"),          # the apps' client on the service's code
        ("LedgerServer", "LedgerClient"),        # the service on its client
        ("LedgerClient", "LedgerClientAsyncHTTPClient"),  # AsyncHTTPClient forced onto the apps
    ]
    missed = [case for case in cases if not arrows(with_arrow(*case))]
    if arrows(package):
        missed.append(("the package as it is", "should pass"))
    for source, dependency in missed:
        print(f"check-layers self-test: {source} -> {dependency} was not caught", file=sys.stderr)
    print("layers self-test: " + ("failed" if missed else f"all {len(cases)} forbidden arrows caught"))
    return 1 if missed else 0


def main():
    package = json.load(sys.stdin)
    if "--self-test" in sys.argv:
        return self_test(package)
    problems = arrows(package) + imports(package)
    print("\n".join(problems) or "layers: every import is declared and every arrow points down")
    return 1 if problems else 0


sys.exit(main())
