"""Writes the import benchmark's file: N records of the ledger's JSON lines, each an email with a
bcrypt hash (cost 10, made by PyPI's bcrypt), a third with a verified phone number, a tenth with
a Google subject. bcrypt at cost 10 takes ~50 ms a hash, so the file draws from a pool of 64
hashes (of 64 passwords): the import keeps hashes as they come and never checks them, so the
pool changes nothing it measures.
    python import_file.py N FILE
"""
import json
import sys

import bcrypt

count, path = int(sys.argv[1]), sys.argv[2]
pool = [bcrypt.hashpw(f"bench-password-{i}".encode(), bcrypt.gensalt(rounds=10)).decode() for i in range(64)]
with open(path, "w", encoding="utf-8") as out:
    for i in range(count):
        record = {"external_id": f"user-{i}", "email": f"user{i}@bench.example", "email_verified": i % 2 == 0,
                  "display_name": f"Bench User {i}", "password_hash": pool[i % 64],
                  "created_at": "2021-03-04T05:06:07Z"}
        if i % 3 == 0:
            record["phone"] = "+9955%08d" % i
            record["phone_verified"] = True
        if i % 10 == 0:
            record["providers"] = [{"provider": "google", "subject": f"google-{i}", "email": f"user{i}@bench.example"}]
        out.write(json.dumps(record, separators=(",", ":")) + "\n")
