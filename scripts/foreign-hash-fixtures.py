"""Writes Tests/LedgerCryptoTests/Fixtures/foreign-hashes.json: password hashes made by the
libraries other systems use (PyPI's bcrypt, argon2-cffi, Django's hashers, passlib and
firebase-scrypt), which
`ForeignPasswordHashTests` verifies with this project's code. Cheap parameters, so the tests run
fast; the forms are the ones an import brings. Run with a venv holding
scripts/foreign-hash-requirements.txt:
    python3 -m venv /tmp/hashes && /tmp/hashes/bin/pip install -r scripts/foreign-hash-requirements.txt
    /tmp/hashes/bin/python scripts/foreign-hash-fixtures.py
"""
import json
import os

import base64
from importlib.metadata import version

import argon2
import bcrypt
import firebase_scrypt
from django.conf import settings

settings.configure(PASSWORD_HASHERS=[])
from django.contrib.auth.hashers import PBKDF2PasswordHasher, PBKDF2SHA1PasswordHasher  # noqa: E402
from passlib.hash import pbkdf2_sha1, pbkdf2_sha256, scrypt  # noqa: E402

PASSWORDS = ["violet-harbor-91", "pässwörd ünïcødé ☃", "x"]
fixtures = []


def add(form, library, password, encoded):
    fixtures.append({"form": form, "library": library, "password": password, "hash": encoded})


for password in PASSWORDS:
    for prefix in [b"2a", b"2b"]:
        add("bcrypt", "bcrypt " + bcrypt.__version__, password,
            bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4, prefix=prefix)).decode())
    for kind, name in [(argon2.Type.ID, "argon2id"), (argon2.Type.I, "argon2i")]:
        hasher = argon2.PasswordHasher(time_cost=2, memory_cost=1024, parallelism=2, type=kind)
        add(name, "argon2-cffi " + argon2.__version__, password, hasher.hash(password))
    add("pbkdf2_sha256", "django", password, PBKDF2PasswordHasher().encode(password, "seasalt42", iterations=1000))
    add("pbkdf2_sha1", "django", password, PBKDF2SHA1PasswordHasher().encode(password, "seasalt43", iterations=1000))
    add("pbkdf2_sha256", "passlib", password, pbkdf2_sha256.using(rounds=1000).hash(password))
    add("pbkdf2_sha1", "passlib", password, pbkdf2_sha1.using(rounds=1000).hash(password))
    add("scrypt", "passlib", password, scrypt.using(rounds=10, block_size=8, parallelism=1).hash(password))
    # Firebase's modified scrypt: the hash firebase-scrypt makes from a project's hash config
    # (signer key, salt separator, rounds, mem_cost) and the user's salt, in the string the
    # service stores ($firebase-scrypt$r=…,m=…$separator$signer key$salt$hash).
    signer_key, separator, salt = os.urandom(64), b"\x07", os.urandom(12)
    derived = firebase_scrypt.generate_derived_key(password, salt, separator, 8, 10)
    firebase_hash = base64.b64encode(firebase_scrypt.encrypt(signer_key, derived)).decode()
    parts = [base64.b64encode(part).decode() for part in (separator, signer_key, salt)]
    assert firebase_scrypt.verify_password(password, firebase_hash, parts[2], parts[0], parts[1], 8, 10)
    add("firebase_scrypt", "firebase-scrypt " + version("firebase-scrypt"), password, "$firebase-scrypt$r=8,m=10$" + "$".join(parts + [firebase_hash]))
# $2y$ is PHP's name for $2b$: the same hash under another prefix.
add("bcrypt", "bcrypt " + bcrypt.__version__ + " ($2y$)", PASSWORDS[0],
    "$2y$" + bcrypt.hashpw(PASSWORDS[0].encode(), bcrypt.gensalt(rounds=4)).decode()[4:])

path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "LedgerCryptoTests", "Fixtures",
                    "foreign-hashes.json")
with open(path, "w", encoding="utf-8") as handle:
    json.dump(fixtures, handle, indent=1, ensure_ascii=False)
    handle.write("\n")
print(f"wrote {len(fixtures)} hashes to {path}")
